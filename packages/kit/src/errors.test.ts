import { describe, expect, it } from 'vitest';
import { errorCode, isRetryableError, toError } from './errors.js';

const withCode = (code: string, message = code): Error => Object.assign(new Error(message), { code });

describe('toError', () => {
  it('returns an Error as is and wraps anything else with the original as cause', () => {
    const e = new TypeError('x');
    expect(toError(e)).toBe(e);
    expect(toError('boom').message).toBe('non-error thrown: boom');
    expect(toError({ a: 1 }).message).toBe('non-error thrown: {"a":1}');
    expect(toError(undefined).message).toBe('non-error thrown: undefined');
    expect(toError(42).cause).toBe(42);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(toError(cyclic).message).toBe('non-error thrown: [object Object]');
    expect(toError(10n).message).toBe('non-error thrown: 10');
  });
});

describe('isRetryableError', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'EPIPE',
    'EAI_AGAIN',
    'PROTOCOL_CONNECTION_LOST',
    'ER_LOCK_DEADLOCK',
    'ER_LOCK_WAIT_TIMEOUT',
    'ER_CON_COUNT_ERROR',
  ])('retries %s', (code) => {
    expect(isRetryableError(withCode(code))).toBe(true);
  });

  it.each(['ER_DUP_ENTRY', 'ER_PARSE_ERROR', 'ER_NO_SUCH_TABLE', 'ERR_INVALID_ARG_TYPE', 'ENOENT'])('does not retry %s', (code) => {
    expect(isRetryableError(withCode(code))).toBe(false);
  });

  it('recognises a mysql2 server error by errno', () => {
    expect(isRetryableError(Object.assign(new Error('Deadlock found'), { errno: 1213, sqlState: '40001' }))).toBe(true);
    expect(isRetryableError(Object.assign(new Error('Duplicate entry'), { errno: 1062, sqlState: '23000' }))).toBe(false);
  });

  it('follows the cause chain and AggregateError members', () => {
    expect(isRetryableError(new Error('query failed', { cause: withCode('ECONNRESET') }))).toBe(true);
    expect(isRetryableError(new AggregateError([new Error('x'), withCode('ECONNREFUSED')], 'connect failed'))).toBe(true);
    expect(isRetryableError(new Error('wrapped', { cause: new Error('plain') }))).toBe(false);
  });

  it('recognises Redis failover replies and client "connection closed" messages', () => {
    expect(isRetryableError(new Error("READONLY You can't write against a read only replica."))).toBe(true);
    expect(isRetryableError(new Error('LOADING Redis is loading the dataset in memory'))).toBe(true);
    expect(isRetryableError(new Error('Connection is closed.'))).toBe(true);
    expect(isRetryableError(new Error('Channel closed'))).toBe(true);
    expect(isRetryableError(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
  });

  it('is false for non-errors', () => {
    expect(isRetryableError(undefined)).toBe(false);
    expect(isRetryableError('ECONNRESET')).toBe(false);
    expect(errorCode({ code: 5 })).toBeUndefined();
  });
});
