import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { loopDelayMs, startBackgroundLoop, type LoopTimers } from './loop.js';

/** Timers that fire only when the test says so. */
class ManualTimers implements LoopTimers {
  private next = 1;
  readonly pending = new Map<number, { callback: () => void; ms: number }>();
  readonly delays: number[] = [];
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { callback, ms });
    this.delays.push(ms);
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  /** Fires every pending timer. */
  fire(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const t of due) t.callback();
  }
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    service: 'test',
    destination: new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        cb();
      },
    }),
  });
  return { lines, logger };
}

describe('startBackgroundLoop', () => {
  it('runs at once, then every interval', async () => {
    const timers = new ManualTimers();
    let runs = 0;
    const loop = startBackgroundLoop({
      name: 't',
      intervalMs: 1_000,
      jitter: 0,
      timers,
      logger: capture().logger,
      run: () => {
        runs++;
      },
    });
    expect(timers.delays).toEqual([0]);
    timers.fire();
    await flush();
    expect(runs).toBe(1);
    expect(timers.delays).toEqual([0, 1_000]);
    timers.fire();
    await flush();
    expect(runs).toBe(2);
    await loop.stop();
    expect(timers.pending.size).toBe(0);
  });

  it('never overlaps: a wake during a run queues one more run after it', async () => {
    const timers = new ManualTimers();
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const releases: Array<() => void> = [];
    const loop = startBackgroundLoop({
      name: 't',
      intervalMs: 1_000,
      jitter: 0,
      timers,
      logger: capture().logger,
      run: async () => {
        active++;
        runs++;
        maxActive = Math.max(maxActive, active);
        await new Promise<void>((r) => releases.push(r));
        active--;
      },
    });
    timers.fire();
    await flush();
    expect(loop.running).toBe(true);
    loop.wake();
    loop.wake();
    timers.fire(); // nothing pending while running
    await flush();
    expect(runs).toBe(1);
    releases.shift()?.();
    await flush();
    expect(timers.delays.at(-1)).toBe(0); // the wake asked for an immediate re-run
    timers.fire();
    await flush();
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
    releases.shift()?.();
    await flush();
    expect(timers.delays.at(-1)).toBe(1_000);
    await loop.stop();
  });

  it('does not start a second iteration when run() itself calls wake()', async () => {
    const timers = new ManualTimers();
    let active = 0;
    let maxActive = 0;
    const loop = startBackgroundLoop({
      name: 't',
      intervalMs: 1_000,
      jitter: 0,
      timers,
      logger: capture().logger,
      run: () => {
        active++;
        maxActive = Math.max(maxActive, active);
        loop.wake();
        active--;
      },
    });
    timers.fire();
    await flush();
    expect(maxActive).toBe(1);
    await loop.stop();
  });

  it('wakes early from an idle wait', async () => {
    const timers = new ManualTimers();
    let runs = 0;
    const loop = startBackgroundLoop({
      name: 't',
      intervalMs: 60_000,
      timers,
      logger: capture().logger,
      run: () => {
        runs++;
      },
    });
    timers.fire();
    await flush();
    expect(runs).toBe(1);
    loop.wake();
    await flush();
    expect(runs).toBe(2);
    expect(timers.pending.size).toBe(1);
    await loop.stop();
  });

  it('never throws: logs failures with context and backs off exponentially with jitter, then recovers', async () => {
    const timers = new ManualTimers();
    const { lines, logger } = capture();
    let fail = 4;
    const loop = startBackgroundLoop({
      name: 'refill',
      intervalMs: 1_000,
      backoffInitialMs: 100,
      backoffMaxMs: 500,
      jitter: 0.5,
      random: () => 1, // the top of the jitter range: +50 %
      timers,
      logger,
      run: async () => {
        if (fail-- > 0) throw new Error('db down');
      },
    });
    for (let i = 0; i < 5; i++) {
      timers.fire();
      await flush();
    }
    expect(timers.delays).toEqual([0, 150, 300, 600, 750, 1_500]);
    const errors = lines.filter((l) => l.msg === 'loop iteration failed');
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatchObject({ level: 'error', loop: 'refill', consecutiveFailures: 1, err: { message: 'db down' } });
    expect(lines.some((l) => l.msg === 'loop recovered')).toBe(true);
    expect(loop.consecutiveFailures).toBe(0);
    await loop.stop();
  });

  it('keeps the backoff when woken after a failure', async () => {
    const timers = new ManualTimers();
    let runs = 0;
    const loop = startBackgroundLoop({
      name: 't',
      intervalMs: 1_000,
      timers,
      logger: capture().logger,
      run: () => {
        runs++;
        throw new Error('down');
      },
    });
    timers.fire();
    await flush();
    loop.wake();
    await flush();
    expect(runs).toBe(1);
    await loop.stop();
  });

  it('stop() aborts the signal, awaits the running iteration and schedules nothing more', async () => {
    const timers = new ManualTimers();
    let finished = false;
    let seenSignal: AbortSignal | undefined;
    let release: () => void = () => undefined;
    const loop = startBackgroundLoop({
      name: 't',
      intervalMs: 1_000,
      timers,
      logger: capture().logger,
      run: async (signal) => {
        seenSignal = signal;
        await new Promise<void>((r) => (release = r));
        finished = true;
      },
    });
    timers.fire();
    await flush();
    const stopping = loop.stop();
    expect(seenSignal?.aborted).toBe(true);
    let stopped = false;
    void stopping.then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    expect(timers.pending.size).toBe(0);
    loop.wake();
    expect(timers.pending.size).toBe(0);
    await loop.stop(); // idempotent
  });

  it('works with real timers', async () => {
    let runs = 0;
    const loop = startBackgroundLoop({
      name: 'real',
      intervalMs: 5,
      logger: capture().logger,
      run: () => {
        runs++;
      },
    });
    await new Promise((r) => setTimeout(r, 100));
    await loop.stop();
    expect(runs).toBeGreaterThan(2);
  });
});

describe('loopDelayMs', () => {
  const opts = { intervalMs: 1_000, backoffInitialMs: 100, backoffMaxMs: 1_000, jitter: 0.2 };
  it('spreads within ±jitter and caps the backoff', () => {
    expect(loopDelayMs(0, opts, () => 0)).toBe(800);
    expect(loopDelayMs(0, opts, () => 0.5)).toBe(1_000);
    expect(loopDelayMs(1, opts, () => 0.5)).toBe(100);
    expect(loopDelayMs(3, opts, () => 0.5)).toBe(400);
    expect(loopDelayMs(50, opts, () => 0.5)).toBe(1_000);
  });
});
