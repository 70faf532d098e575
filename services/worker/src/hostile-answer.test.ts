/**
 * #45 "Noisy neighbours" on a real worker (in process, real RabbitMQ and Redis, a real HTTP
 * business server): team a's endpoints answer `data` with a `__proto__` key or nested 40 levels
 * deep, beside ten runs of team b. Each of b's endpoints is called once and its run SUCCEEDS; a's
 * runs FAIL naming the problem. The stand-in broker reads messages whole (`parseMessage`), so a
 * result it receives at all was carried by a message no broker refuses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DispatchItem } from '@ax/core';
import { uniqueNamespace, waitFor } from '@ax/testing';
import { dispatchItem } from './testing/fixtures.js';
import { startDriver, startTestWorker, type Driver, type TestWorker } from './testing/harness.js';

const namespace = uniqueNamespace('axwh');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-hostile-'));
const calls = new Map<string, number>();
const ANSWERS: Record<string, string> = {
  '/a/proto': '{"success":true,"data":{"rows":1,"__proto__":{"polluted":true}}}',
  '/a/deep': `{"success":true,"data":${'{"k":'.repeat(40)}1${'}'.repeat(40)}}`,
};
const server: Server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const url = req.url ?? '';
    calls.set(url, (calls.get(url) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWERS[url] ?? `{"success":true,"data":{"path":${JSON.stringify(url)}}}`);
  });
});
let driver: Driver;
let worker: TestWorker | undefined;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  driver = await startDriver(namespace);
});

afterAll(async () => {
  await worker?.stop();
  await driver?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(tmp, { recursive: true, force: true });
});

describe('#45 a hostile business answer fails its own run only', () => {
  it("a's __proto__ and 40-level answers FAIL naming the problem; b's ten runs SUCCEED with one call each", async () => {
    worker = await startTestWorker({ driver, workerId: 'w-hostile', settings: { slots: 16 }, secret: 'it-secret-0123456789' });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const http = (p: string): DispatchItem['exec'] => ({ type: 'http', url: `${base}${p}`, method: 'POST' });
    const proto = dispatchItem({ taskName: 'a_proto', exec: http('/a/proto') });
    const deep = dispatchItem({ taskName: 'a_deep', exec: http('/a/deep') });
    const bs = Array.from({ length: 10 }, (_, i) => dispatchItem({ taskName: `b_${i}`, exec: http(`/b/${i}`) }));
    // One dispatch message: the results finish together and travel in the same few messages.
    await driver.dispatch('w-hostile', [...bs.slice(0, 5), proto, deep, ...bs.slice(5)]);
    const all = [proto, deep, ...bs];
    await waitFor(() => all.every((d) => driver.resultOf(d.executionId) !== undefined), { description: 'every result received', timeoutMs: 20_000 });

    for (const [i, b] of bs.entries()) {
      expect(driver.resultOf(b.executionId)).toMatchObject({ outcome: 'SUCCESS', exitCode: 200, data: { path: `/b/${i}` } });
      expect(calls.get(`/b/${i}`)).toBe(1);
    }
    const protoResult = driver.resultOf(proto.executionId);
    expect(protoResult).toMatchObject({ outcome: 'FAILED', exitCode: 200 });
    expect(protoResult?.error).toBe(`the answer's data was refused: the key "__proto__" is not allowed (at data.__proto__)`);
    expect(protoResult?.data).toBeUndefined();
    const deepResult = driver.resultOf(deep.executionId);
    expect(deepResult).toMatchObject({ outcome: 'FAILED', exitCode: 200 });
    expect(deepResult?.error).toMatch(/^the answer's data was refused: nested deeper than 32 levels/);
    expect(calls.get('/a/proto')).toBe(1);
    expect(calls.get('/a/deep')).toBe(1);
  });
});
