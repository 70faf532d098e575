import os from 'node:os';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { testRedisUrl } from '@ax/testing';
import { REDACTED, createLogger, withLogContext } from './logger.js';

function capture(level?: 'info' | 'debug' | 'warn') {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger({ service: 'broker', destination, ...(level ? { level } : {}) }) };
}

describe('createLogger', () => {
  it('writes JSON lines with service, pid, hostname, a string level and an ISO time', () => {
    const { lines, logger } = capture();
    logger.info({ n: 1 }, 'hello');
    logger.debug('hidden at info');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', service: 'broker', pid: process.pid, hostname: os.hostname(), n: 1, msg: 'hello' });
    expect(String(lines[0]?.time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('honours the level', () => {
    const { lines, logger } = capture('warn');
    logger.info('no');
    logger.warn('yes');
    expect(lines.map((l) => l.msg)).toEqual(['yes']);
  });

  it('redacts authorization headers, exec headers and env, tokens and passwords', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        req: { headers: { authorization: 'Bearer abc', cookie: 'sid=1', accept: 'json' } },
        task: { name: 't1', exec: { kind: 'http', url: 'https://x', headers: { 'X-Key': 'k' }, env: { PW: 'p' } } },
        exec: { headers: { a: 'b' }, env: { A: 'B' } },
        token: 't',
        body: { password: 'p', token: 'x' },
      },
      'request',
    );
    const line = JSON.stringify(lines[0]);
    for (const secret of ['Bearer abc', 'sid=1', '"X-Key"', '"PW"', '"A":"B"', '"t"', '"p"', '"x"']) {
      expect(line).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({
      req: { headers: { authorization: REDACTED, cookie: REDACTED, accept: 'json' } },
      task: { name: 't1', exec: { kind: 'http', url: 'https://x', headers: REDACTED, env: REDACTED } },
      exec: { headers: REDACTED, env: REDACTED },
      token: REDACTED,
      body: { password: REDACTED, token: REDACTED },
    });
  });

  it('redacts a child logger\'s bindings too, and leaves the logged objects as they were', () => {
    const { lines, logger } = capture();
    const logged = { req: { headers: { Authorization: 'Bearer c' } } };
    logger.child({ adminToken: 'secret-binding', taskName: 't' }).info(logged, 'x');
    expect(lines[0]).toMatchObject({ adminToken: REDACTED, taskName: 't', req: { headers: { Authorization: REDACTED } } });
    expect(logged.req.headers.Authorization).toBe('Bearer c');
  });

  it('serialises errors under err with message and stack', () => {
    const { lines, logger } = capture();
    logger.error({ err: new Error('bad') }, 'failed');
    expect(lines[0]).toMatchObject({ err: { type: 'Error', message: 'bad' } });
    expect(String((lines[0]?.err as { stack?: string }).stack)).toContain('Error: bad');
  });
});

describe('withLogContext', () => {
  it('binds the standard fields and leaves out unset ones', () => {
    const { lines, logger } = capture();
    withLogContext(logger, { taskName: 'nightly', instanceId: 42n, executionId: undefined, traceId: 'tr-1', loop: 'dispatch' }).info('go');
    expect(lines[0]).toMatchObject({ taskName: 'nightly', instanceId: '42', traceId: 'tr-1', loop: 'dispatch', service: 'broker' });
    expect(lines[0]).not.toHaveProperty('executionId');
  });
});

describe('createLogger and a refused Redis login (#44)', () => {
  it('never writes the password of a failed AUTH that ioredis puts on its error (a real WRONGPASS from the test Redis)', async () => {
    const password = `pw-not-to-log-${Math.random().toString(36).slice(2)}`;
    const client = new Redis(testRedisUrl(), { username: `ax-no-such-user-${process.pid}`, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    // ioredis emits the refused AUTH as an 'error' (the ReplyError, with the command on it).
    const emitted: unknown[] = [];
    client.on('error', (err: unknown) => emitted.push(err));
    await client.connect().catch(() => undefined);
    client.disconnect();
    const error = emitted.find((e) => /WRONGPASS/.test(String((e as Error).message)));
    expect(String((error as Error).message)).toMatch(/WRONGPASS/);
    expect(JSON.stringify((error as { command?: unknown }).command)).toContain(password);
    const { lines, logger } = capture();
    logger.warn({ err: error }, 'redis login refused');
    expect(JSON.stringify(lines[0])).not.toContain(password);
    const logged = lines[0]?.err as { message: string; command: unknown };
    expect(logged.message).toMatch(/WRONGPASS/);
    expect(logged.command).toMatchObject({ name: 'auth', args: [REDACTED] });
  });
});
