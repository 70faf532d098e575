// What each executor writes to an attempt's output (DESIGN §11): shell pipes apart, secrets
// masked even when printed in two halves, the HTTP request/status/body lines and errors on
// stderr, plugin ctx.log / ctx.error. The result's mixed tail is unchanged.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logItemSchema, type LogItem } from '@ax/core';
import { silentLogger } from '@ax/kit';
import { repoRoot } from '@ax/testing';
import { AttemptLog, noItems, type LogItems } from '../logs/attempt-log.js';
import { createPluginExecutor } from '../plugins/plugin-executor.js';
import { loadPlugins } from '../plugins/plugin-registry.js';
import { dispatchItem } from '../testing/fixtures.js';
import { reassemble } from '../testing/log-items.js';
import { hostAllowList } from './host-allow.js';
import { createHttpExecutor } from './http.js';
import { createShellExecutor } from './shell.js';
import type { ExecutionRequest } from './types.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-exec-output-'));
const secretsDir = path.join(dir, 'secrets');
mkdirSync(path.join(secretsDir, 'default'), { recursive: true });
writeFileSync(path.join(secretsDir, 'default', 'TOKEN'), 'tok-5ecret-0123456789\n');

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    if (req.url === '/boom') return void res.writeHead(500).end('internal error');
    const key = String(req.headers['x-api-key'] ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, message: `used ${key}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await http.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const shell = createShellExecutor({ outputTailBytes: 4096, killGraceMs: 500, env: { PATH: process.env.PATH }, secretsDir });
const http = createHttpExecutor({ workerId: 'w-out', secret: 'worker-test-secret-0123', allow: hostAllowList(['127.0.0.1']), outputTailBytes: 4096, secretsDir });

/** An attempt's output, flushed every 20 ms while it runs (as the shipper would). */
function capture(item: ReturnType<typeof dispatchItem>): { request: ExecutionRequest; done: () => LogItem[]; flushes: LogItems[] } {
  const log = new AttemptLog(item, { maxBytes: 1_000_000 }, { onPending: () => undefined, shouldStopHead: () => false });
  const flushes: LogItems[] = [];
  const timer = setInterval(() => {
    const items = noItems();
    log.takeChunks(items);
    flushes.push(items);
  }, 20);
  return {
    request: { item, deadlineMs: Date.now() + item.timeoutSeconds * 1000, signal: new AbortController().signal, output: log },
    flushes,
    done: () => {
      clearInterval(timer);
      const items = noItems();
      log.end(items);
      flushes.push(items);
      return flushes.flatMap((f) => f.items).map((text) => logItemSchema.parse(JSON.parse(text)));
    },
  };
}

describe('executor output', () => {
  it('shell: stdout and stderr apart; a secret printed in two halves, 300 ms apart, is masked and never shipped in part', async () => {
    const item = dispatchItem({
      exec: {
        type: 'shell',
        command: ['/bin/sh', '-c', 'echo out-1; echo err-1 >&2; printf "token %s" "${T%??????????}"; sleep 0.3; printf "%s done\\n" "${T#???????????}"; echo err-2 >&2'],
        shell: false,
        env: { T: { secretRef: 'TOKEN' } },
      },
    });
    const c = capture(item);
    const out = await shell.run(c.request);
    const items = c.done();
    expect(out).toMatchObject({ outcome: 'SUCCESS' });
    const back = reassemble(items, item.executionId);
    expect(back.streams.stdout.toString()).toBe('out-1\ntoken *** done\n');
    expect(back.streams.stderr.toString()).toBe('err-1\nerr-2\n');
    // Several flushes happened during the sleep, none carried a piece of the value.
    expect(c.flushes.length).toBeGreaterThan(5);
    for (const chunk of back.chunks) expect(Buffer.from(chunk.data, 'base64').toString()).not.toMatch(/tok-|5ecret|0123456789/);
    // The result's tail still mixes both streams (as before this log existed).
    expect(out.outputTail).toContain('out-1\n');
    expect(out.outputTail).toContain('err-2\n');
  });

  it('http: the request line, the status line and the body on stdout, secrets masked; a failure\'s error on stderr', async () => {
    const ok = dispatchItem({ exec: { type: 'http', url: `${base}/ok?x=1`, method: 'POST', headers: { 'X-Api-Key': { secretRef: 'TOKEN' } } } });
    const c = capture(ok);
    expect(await http.run(c.request)).toMatchObject({ outcome: 'SUCCESS', exitCode: 200 });
    const back = reassemble(c.done(), ok.executionId);
    expect(back.streams.stdout.toString()).toBe(`POST ${base}/ok?x=1\nHTTP 200\n{"success":true,"message":"used ***"}\n`);
    expect(back.streams.stderr.toString()).toBe('');

    const boom = dispatchItem({ exec: { type: 'http', url: `http://user:pa55word@${base.slice('http://'.length)}/boom`, method: 'POST' } });
    const d = capture(boom);
    expect(await http.run(d.request)).toMatchObject({ outcome: 'FAILED', exitCode: 500 });
    const failed = reassemble(d.done(), boom.executionId);
    expect(failed.streams.stdout.toString()).toBe(`POST http://user:***@${base.slice('http://'.length)}/boom\nHTTP 500\ninternal error\n`);
    expect(failed.streams.stderr.toString()).toBe('answered HTTP 500\n');

    const refused = dispatchItem({ exec: { type: 'http', url: 'http://example.com/x', method: 'POST' } });
    const e = capture(refused);
    await http.run(e.request);
    expect(reassemble(e.done(), refused.executionId).streams.stderr.toString()).toBe('host example.com is not in AX_HTTP_EXECUTOR_ALLOW\n');
  });

  it('plugin: ctx.log goes to stdout, ctx.error to stderr', async () => {
    const pluginDir = path.join(dir, 'plugins');
    mkdirSync(pluginDir);
    writeFileSync(path.join(pluginDir, 'talk.mjs'), `export function run(ctx) { ctx.log('hello', 1); ctx.error('careful'); ctx.log('bye'); }\n`);
    const plugins = await loadPlugins(pluginDir, silentLogger());
    const executor = createPluginExecutor({ plugins, outputTailBytes: 4096, runnerPath: path.join(repoRoot(), 'services/worker/dist/plugins/plugin-runner.js') });
    const item = dispatchItem({ exec: { type: 'plugin', name: 'talk', config: {} } });
    const c = capture(item);
    expect(await executor.run(c.request)).toMatchObject({ outcome: 'SUCCESS' });
    const back = reassemble(c.done(), item.executionId);
    expect(back.streams.stdout.toString()).toBe('hello 1\nbye\n');
    expect(back.streams.stderr.toString()).toBe('careful\n');
  });
});
