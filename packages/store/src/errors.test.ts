import { describe, expect, it } from 'vitest';
import {
  isConnectionError,
  isDeadlock,
  isDuplicateKeyError,
  isLockConflict,
  isNoSuchTableError,
  isRetryableMysqlError,
  toError,
} from './errors.js';

function driverError(fields: { code?: string; errno?: number }): Error {
  return Object.assign(new Error('x'), fields);
}

describe('driver error classification', () => {
  it('retries deadlocks, lock wait timeouts and broken links, not statement errors', () => {
    expect(isRetryableMysqlError(driverError({ code: 'ER_LOCK_DEADLOCK', errno: 1213 }))).toBe(true);
    expect(isRetryableMysqlError(driverError({ code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 }))).toBe(true);
    expect(isRetryableMysqlError(driverError({ code: 'PROTOCOL_CONNECTION_LOST' }))).toBe(true);
    expect(isRetryableMysqlError(driverError({ code: 'ER_DUP_ENTRY', errno: 1062 }))).toBe(false);
    expect(isRetryableMysqlError(driverError({ code: 'ER_PARSE_ERROR', errno: 1064 }))).toBe(false);
    expect(isRetryableMysqlError('not an error')).toBe(false);
  });

  it('a lock conflict is a deadlock or a lock wait timeout, also as a cause; a deadlock only 1213', () => {
    const deadlock = driverError({ code: 'ER_LOCK_DEADLOCK', errno: 1213 });
    const timeout = driverError({ code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 });
    expect([isLockConflict(deadlock), isLockConflict(timeout), isLockConflict(new Error('wrapped', { cause: deadlock }))]).toEqual([true, true, true]);
    expect([isDeadlock(deadlock), isDeadlock(timeout), isDeadlock(new Error('wrapped', { cause: deadlock }))]).toEqual([true, false, true]);
    expect([isLockConflict(driverError({ errno: 1062 })), isDeadlock('text')]).toEqual([false, false]);
  });

  it('tells connection problems, duplicates and missing tables apart', () => {
    expect(isConnectionError(driverError({ code: 'ECONNREFUSED' }))).toBe(true);
    expect(isConnectionError(driverError({ code: 'ER_ACCESS_DENIED_ERROR', errno: 1045 }))).toBe(true);
    expect(isConnectionError(driverError({ code: 'ER_DUP_ENTRY', errno: 1062 }))).toBe(false);
    expect(isDuplicateKeyError(driverError({ errno: 1062 }))).toBe(true);
    expect(isNoSuchTableError(driverError({ errno: 1146 }))).toBe(true);
    expect(isNoSuchTableError(driverError({ errno: 1062 }))).toBe(false);
  });

  it('converts anything thrown into an Error', () => {
    const e = new Error('e');
    expect(toError(e)).toBe(e);
    expect(toError('boom').message).toBe('boom');
    expect(toError({ a: 1 }).message).toBe('{"a":1}');
  });
});
