import { describe, expect, it } from 'vitest';
import { WaitTimeoutError, waitFor, waitForResult } from './wait.js';

describe('waitFor', () => {
  it('resolves with the first value that is not false/null/undefined', async () => {
    let n = 0;
    const value = await waitFor(() => (++n >= 3 ? { n } : undefined), { description: 'n reaches 3', intervalMs: 1 });
    expect(value).toEqual({ n: 3 });
  });

  it('keeps polling while fn throws or rejects', async () => {
    let n = 0;
    const result = await waitForResult(
      async () => {
        if (++n < 3) throw new Error('not yet');
        return 'ok';
      },
      { description: 'ok', intervalMs: 1 },
    );
    expect(result.value).toBe('ok');
    expect(result.attempts).toBe(3);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('accepts 0 and empty string as values', async () => {
    expect(await waitFor(() => 0, { description: 'zero' })).toBe(0);
    expect(await waitFor(() => '', { description: 'empty' })).toBe('');
  });

  it('throws with the description, elapsed ms and the last value on timeout', async () => {
    const instance = { state: 'PENDING' };
    const error = await waitFor(() => instance.state === 'SUCCESS', {
      description: 'instance 7 SUCCESS',
      timeoutMs: 60,
      intervalMs: 10,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    const e = error as WaitTimeoutError;
    expect(e.message).toMatch(/^timed out after \d+ ms \(\d+ attempts\) waiting for instance 7 SUCCESS; last value: false$/);
    expect(e.elapsedMs).toBeGreaterThanOrEqual(60);
    expect(e.elapsedMs).toBeLessThan(1_000);
  });

  it('reports the last error on timeout', async () => {
    const e = (await waitFor(
      () => {
        throw new Error('ECONNREFUSED');
      },
      { description: 'server up', timeoutMs: 30, intervalMs: 5 },
    ).catch((x: unknown) => x)) as WaitTimeoutError;
    expect(e.message).toContain('waiting for server up; last error: ECONNREFUSED');
    expect(e.lastError).toBeInstanceOf(Error);
  });

  it('does not hang on an attempt that never settles', async () => {
    const started = Date.now();
    const e = (await waitFor(() => new Promise<boolean>(() => undefined), { description: 'hang', timeoutMs: 50 }).catch(
      (x: unknown) => x,
    )) as WaitTimeoutError;
    expect(e).toBeInstanceOf(WaitTimeoutError);
    expect(e.message).toContain('still running when the time ran out');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
