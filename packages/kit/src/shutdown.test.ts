import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { silentLogger } from './logger.js';
import { createShutdown } from './shutdown.js';

function setup(graceMs: number) {
  const emitter = new EventEmitter();
  const exits: number[] = [];
  let exited: (code: number) => void = () => undefined;
  const exitedOnce = new Promise<number>((resolve) => {
    exited = resolve;
  });
  const shutdown = createShutdown({
    logger: silentLogger(),
    graceMs,
    process: emitter,
    exit: (code) => {
      exits.push(code);
      exited(code);
    },
  });
  return { emitter, exits, exitedOnce, shutdown };
}

describe('createShutdown', () => {
  it('runs closers in reverse order on SIGTERM and exits 0', async () => {
    const { emitter, exits, exitedOnce, shutdown } = setup(1_000);
    const order: string[] = [];
    shutdown.register('pool', async () => {
      await new Promise((r) => setTimeout(r, 10));
      order.push('pool');
    });
    shutdown.register('redis', () => {
      order.push('redis');
    });
    shutdown.register('loops', async () => {
      order.push('loops');
    });
    expect(shutdown.isShuttingDown).toBe(false);
    emitter.emit('SIGTERM');
    expect(shutdown.isShuttingDown).toBe(true);
    expect(shutdown.signal.aborted).toBe(true);
    expect(await exitedOnce).toBe(0);
    expect(order).toEqual(['loops', 'redis', 'pool']);
    expect(exits).toEqual([0]);
    expect(emitter.listenerCount('SIGTERM')).toBe(0);
    expect(emitter.listenerCount('SIGINT')).toBe(0);
  });

  it('also reacts to SIGINT', async () => {
    const { emitter, exitedOnce } = setup(1_000);
    emitter.emit('SIGINT');
    expect(await exitedOnce).toBe(0);
  });

  it('exits 1 when the grace runs out, without waiting for the stuck closer', async () => {
    const { emitter, exits, exitedOnce, shutdown } = setup(50);
    const order: string[] = [];
    shutdown.register('never-stops', () => new Promise<void>(() => undefined));
    shutdown.register('fast', () => {
      order.push('fast');
    });
    const started = Date.now();
    emitter.emit('SIGTERM');
    expect(await exitedOnce).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(order).toEqual(['fast']);
    expect(exits).toEqual([1]);
  });

  it('runs the remaining closers when one fails, then exits 1', async () => {
    const { exits, shutdown } = setup(1_000);
    const order: string[] = [];
    shutdown.register('a', () => {
      order.push('a');
    });
    shutdown.register('b', () => {
      throw new Error('b failed');
    });
    shutdown.register('c', () => {
      order.push('c');
    });
    expect(await shutdown.shutdown('test')).toBe(1);
    expect(order).toEqual(['c', 'a']);
    expect(exits).toEqual([1]);
  });

  it('exits at once with 1 on a second signal', async () => {
    const { emitter, exits, shutdown } = setup(10_000);
    let release: () => void = () => undefined;
    shutdown.register('slow', () => new Promise<void>((r) => (release = r)));
    emitter.emit('SIGTERM');
    await new Promise((r) => setTimeout(r, 10));
    expect(exits).toEqual([]);
    emitter.emit('SIGINT');
    expect(exits).toEqual([1]);
    release();
    await new Promise((r) => setTimeout(r, 10));
    expect(exits).toEqual([1]); // the late clean finish does not exit again
  });

  it('returns the same run when shutdown is called twice and refuses late registrations', async () => {
    const { shutdown, exits } = setup(1_000);
    const first = shutdown.shutdown('one');
    const second = shutdown.shutdown('two');
    expect(second).toBe(first);
    expect(await first).toBe(0);
    expect(exits).toEqual([0]);
    expect(() => shutdown.register('late', () => undefined)).toThrow(/already started/);
  });
});
