// The framework-neutral core: verifyExecutorCall (typed call or typed error), the keys in both
// shapes and during a rotation, the answer helpers, and the plain node listener.
import { deriveExecutorKey, signV2 } from '@ax/core';
import { describe, expect, it } from 'vitest';
import { acceptedAnswer, AxConfigError, axExecutorApp, createAxClient, errorAnswer, ExecutorCallError, resolveKeys, syncAnswer, verifyExecutorCall } from './index.js';
import { close, executionBody, KEY_V1, listen, MASTER_SECRET, TEAM, workerCall } from './testing/worker-call.js';

const KEY_V2 = { team: TEAM, keyVersion: 2, key: deriveExecutorKey(MASTER_SECRET, TEAM, 2) };
const NOW = 1_764_547_200_000;

/** Headers as the worker sends them (services/worker/src/executors/http.ts). */
function workerHeaders(body: string, key: { keyVersion: number; key: string }, previous?: { key: string }, path = '/ax/job'): Record<string, string> {
  const signed = { timestamp: String(NOW), method: 'POST', path, body };
  return {
    'content-type': 'application/json',
    'x-ax-team': TEAM,
    'x-ax-key-version': String(key.keyVersion),
    'x-ax-timestamp': signed.timestamp,
    'x-ax-signature': signV2(key.key, signed),
    ...(previous === undefined ? {} : { 'x-ax-previous-signature': signV2(previous.key, signed) }),
    'x-ax-worker': 'w1',
    'idempotency-key': 'order_stat:2026-12-01T02:00:00.000Z:1',
  };
}

describe('verifyExecutorCall', () => {
  const body = executionBody({ deadline: new Date(NOW + 60_000).toISOString() });

  it('returns the typed call for a call signed as the worker signs, from a Buffer or a string, node or fetch headers', () => {
    const headers = workerHeaders(body, KEY_V1);
    for (const input of [
      { rawBody: Buffer.from(body), headers },
      { rawBody: body, headers: new Headers(headers) },
    ]) {
      const checked = verifyExecutorCall({ ...input, path: '/ax/job', keys: [KEY_V1], nowMs: NOW });
      expect(checked).toMatchObject({ ok: true, call: { executionId: 'exec-1', team: TEAM, params: { mode: 'sync' }, workerId: 'w1', keyVersion: 1, idempotencyKey: 'order_stat:2026-12-01T02:00:00.000Z:1' } });
    }
  });

  it('returns a typed error: 401 for another body, path or key, 400 for a body that is not an execution', () => {
    const headers = workerHeaders(body, KEY_V1);
    const refusal = (input: Partial<Parameters<typeof verifyExecutorCall>[0]>) => {
      const checked = verifyExecutorCall({ rawBody: body, headers, path: '/ax/job', keys: [KEY_V1], nowMs: NOW, ...input });
      if (checked.ok) throw new Error('expected a refusal');
      expect(checked.error).toBeInstanceOf(ExecutorCallError);
      return { status: checked.error.status, code: checked.error.code };
    };
    expect(refusal({ rawBody: body.replace('exec-1', 'exec-2') })).toEqual({ status: 401, code: 'BAD_SIGNATURE' });
    expect(refusal({ path: '/ax/other' })).toEqual({ status: 401, code: 'BAD_SIGNATURE' });
    expect(refusal({ keys: [{ ...KEY_V1, key: deriveExecutorKey(MASTER_SECRET, 'payments', 1) }] })).toEqual({ status: 401, code: 'BAD_SIGNATURE' });
    expect(refusal({ keys: [{ ...KEY_V1, team: 'payments' }] })).toEqual({ status: 401, code: 'WRONG_TEAM' });
    expect(refusal({ nowMs: NOW + 300_001 })).toEqual({ status: 401, code: 'STALE_TIMESTAMP' });
    expect(refusal({ headers: {} })).toEqual({ status: 401, code: 'MISSING_SIGNATURE' });
    const notAnExecution = '{"hello":1}';
    expect(refusal({ rawBody: notAnExecution, headers: workerHeaders(notAnExecution, KEY_V1) })).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
    expect(refusal({ rawBody: '{', headers: workerHeaders('{', KEY_V1) })).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('rotation: a service holding [v2, v1] verifies v2 calls; one holding only v1 verifies through X-Ax-Previous-Signature', () => {
    const rotated = workerHeaders(body, KEY_V2, KEY_V1);
    const base = { rawBody: body, headers: rotated, path: '/ax/job', nowMs: NOW };
    expect(verifyExecutorCall({ ...base, keys: [KEY_V2, KEY_V1] })).toMatchObject({ ok: true, call: { keyVersion: 2 } });
    expect(verifyExecutorCall({ ...base, keys: [KEY_V1] })).toMatchObject({ ok: true });
    expect(verifyExecutorCall({ ...base, keys: { team: TEAM, keys: { 1: KEY_V1.key } } })).toMatchObject({ ok: true });
    const withoutPrevious = workerHeaders(body, KEY_V2);
    expect(verifyExecutorCall({ ...base, headers: withoutPrevious, keys: [KEY_V1] })).toMatchObject({ ok: false, error: { code: 'UNKNOWN_KEY_VERSION' } });
  });

  it('keys: one clear AxConfigError for a mistake', () => {
    expect(resolveKeys([KEY_V2, KEY_V1], 'x')).toEqual({ team: TEAM, keys: { 1: KEY_V1.key, 2: KEY_V2.key } });
    expect(() => resolveKeys([], 'x')).toThrow(AxConfigError);
    expect(() => resolveKeys([KEY_V1, { ...KEY_V2, team: 'payments' }], 'x')).toThrow(/mixes teams/);
    expect(() => resolveKeys([{ ...KEY_V1, key: '' }], 'x')).toThrow(/empty/);
    expect(() => resolveKeys([{ ...KEY_V1, keyVersion: 0 }], 'x')).toThrow(/positive integer/);
    expect(() => resolveKeys(undefined, 'x')).toThrow(/keys/);
    expect(() => createAxClient({ baseUrl: 'http://127.0.0.1:1', keys: [] })).toThrow(AxConfigError);
  });
});

describe('answer helpers', () => {
  it('sync result, 202 accepted, refusal', () => {
    expect(syncAnswer({ success: true, data: { rows: 1 } })).toEqual({ status: 200, body: { success: true, data: { rows: 1 } } });
    expect(syncAnswer()).toEqual({ status: 200, body: { success: true } });
    expect(syncAnswer('nope' as never)).toMatchObject({ status: 200, body: { success: false } });
    expect(acceptedAnswer()).toEqual({ status: 202, body: { accepted: true } });
    expect(errorAnswer(new ExecutorCallError('BAD_SIGNATURE'))).toEqual({ status: 401, body: { error: { code: 'BAD_SIGNATURE', message: 'the request signature is wrong' } } });
  });
});

describe('axExecutorApp (plain node:http)', () => {
  it('serves its paths (sync, 401), answers 404 elsewhere and 405 for another method', async () => {
    const { server, url } = await listen(axExecutorApp({ '/ax/job': { keys: [KEY_V1], handler: (ctx) => ({ success: true, message: ctx.executionId }) } }));
    try {
      expect(await workerCall(`${url}/ax/job`)).toEqual({ status: 200, json: { success: true, message: 'exec-1' } });
      expect(await workerCall(`${url}/ax/job?x=1`)).toEqual({ status: 200, json: { success: true, message: 'exec-1' } });
      expect(await workerCall(`${url}/ax/job`, { key: { keyVersion: 1, key: 'f'.repeat(64) } })).toMatchObject({ status: 401 });
      expect((await fetch(`${url}/nope`, { method: 'POST' })).status).toBe(404);
      expect((await fetch(`${url}/ax/job`)).status).toBe(405);
      const tooLarge = await workerCall(`${url}/ax/job`, { body: executionBody({ params: { blob: 'x'.repeat(1_100_000) } }) });
      expect(tooLarge).toMatchObject({ status: 413, json: { error: { code: 'BODY_TOO_LARGE' } } });
    } finally {
      await close(server);
    }
  });
});
