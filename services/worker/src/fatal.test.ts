import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@ax/kit';
import { installFatalHandlers, type FatalEventSource } from './fatal.js';

function capture(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    service: 'worker',
    level: 'info',
    base: { workerId: 'w-7' },
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

const emitter = (): EventEmitter & FatalEventSource => new EventEmitter() as EventEmitter & FatalEventSource;

describe('#23 fatal error policy', () => {
  it('#23 an unhandled rejection is logged as one line with the worker and execution ids, flushed, and exits 1', async () => {
    const { logger, lines } = capture();
    const source = emitter();
    const exits: number[] = [];
    const flushes: number[] = [];
    const handlers = installFatalHandlers({
      logger,
      process: source,
      exit: (code) => exits.push(code),
      executionIds: () => ['e-1', 'e-2'],
      flush: (ms) => {
        flushes.push(ms);
        return Promise.resolve(true);
      },
      flushTimeoutMs: 1_000,
    });
    source.emit('unhandledRejection', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    expect(await handlers.exited).toBe(1);
    expect(exits).toEqual([1]);
    expect(flushes).toEqual([1_000]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'fatal', workerId: 'w-7', kind: 'unhandledRejection', executionIds: ['e-1', 'e-2'], err: { message: 'database is locked' } });
    expect(source.listenerCount('unhandledRejection') + source.listenerCount('uncaughtException')).toBe(0);
  });

  it('#23 an uncaught exception exits within the flush bound even when the flush hangs, and a second error exits only once', async () => {
    const { logger, lines } = capture();
    const source = emitter();
    const exits: number[] = [];
    const started = Date.now();
    const handlers = installFatalHandlers({
      logger,
      process: source,
      exit: (code) => exits.push(code),
      flush: () => new Promise<boolean>(() => undefined),
      flushTimeoutMs: 50,
    });
    source.emit('uncaughtException', new TypeError('x is not a function'));
    source.emit('unhandledRejection', 'a string reason');
    expect(await handlers.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(exits).toEqual([1]);
    expect(lines.map((l) => l.level)).toEqual(['fatal', 'error', 'error']);
    expect(lines[0]).toMatchObject({ kind: 'uncaughtException', workerId: 'w-7', executionIds: [] });
    expect(lines[2]).toMatchObject({ flushed: 'timeout' });
  });

  it('#23 a flush that rejects still ends in the exit', async () => {
    const { logger } = capture();
    const source = emitter();
    const exits: number[] = [];
    const handlers = installFatalHandlers({ logger, process: source, exit: (code) => exits.push(code), flush: () => Promise.reject(new Error('outbox closed')) });
    source.emit('unhandledRejection', new Error('boom'));
    await handlers.exited;
    expect(exits).toEqual([1]);
  });
});
