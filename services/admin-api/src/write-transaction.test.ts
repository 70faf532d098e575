/**
 * The retry policy of write routes (write-transaction.ts), on a stand-in pool whose transactions
 * always lose their lock race: every attempt runs, then the answer is 503 with Retry-After,
 * never a 500; errors that are not lock conflicts are not retried. (write-contention.test.ts
 * has the real races against MySQL.)
 */
import type { Pool } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { ApiError, toApiError } from './errors.js';
import { ROUTE_LOCK_CONFLICT_RETRIES, writeTransaction } from './write-transaction.js';

/** A pool whose connections do nothing (BEGIN, COMMIT, ROLLBACK succeed). */
function standInPool(): Pool {
  const conn = {
    beginTransaction: () => Promise.resolve(),
    commit: () => Promise.resolve(),
    rollback: () => Promise.resolve(),
    release: () => undefined,
    destroy: () => undefined,
  };
  return { getConnection: () => Promise.resolve(conn) } as unknown as Pool;
}

function driverError(errno: number, code: string): Error {
  return Object.assign(new Error(code), { errno, code });
}

describe('writeTransaction', () => {
  it.each([
    [1213, 'ER_LOCK_DEADLOCK'],
    [1205, 'ER_LOCK_WAIT_TIMEOUT'],
  ])('runs again after errno %i, then answers 503 UNAVAILABLE with Retry-After once the retries run out', async (errno, code) => {
    let attempts = 0;
    const outcome = await writeTransaction(standInPool(), () => {
      attempts++;
      return Promise.reject(driverError(errno, code));
    }).catch((err: unknown) => err);
    expect(attempts).toBe(ROUTE_LOCK_CONFLICT_RETRIES + 1);
    expect(outcome).toBeInstanceOf(ApiError);
    expect(outcome).toMatchObject({ status: 503, code: 'UNAVAILABLE', details: { reason: 'LOCK_CONFLICT', attempts }, headers: { 'retry-after': '1' } });
  });

  it('commits what a later attempt returns', async () => {
    let attempts = 0;
    const value = await writeTransaction(standInPool(), () => (++attempts < 3 ? Promise.reject(driverError(1213, 'ER_LOCK_DEADLOCK')) : Promise.resolve('done')));
    expect({ value, attempts }).toEqual({ value: 'done', attempts: 3 });
  });

  it('does not retry other errors', async () => {
    let attempts = 0;
    await expect(writeTransaction(standInPool(), () => {
      attempts++;
      return Promise.reject(driverError(1146, 'ER_NO_SUCH_TABLE'));
    })).rejects.toMatchObject({ errno: 1146 });
    expect(attempts).toBe(1);
  });
});

it('a lock conflict thrown anywhere else is answered 503 with Retry-After, not 500', () => {
  const { error, internal } = toApiError(Object.assign(new Error('wrapped'), { cause: driverError(1213, 'ER_LOCK_DEADLOCK') }));
  expect(internal).toBe(false);
  expect(error).toMatchObject({ status: 503, code: 'UNAVAILABLE', headers: { 'retry-after': '1' } });
});
