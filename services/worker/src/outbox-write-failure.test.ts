// Issue #23: an outbox write that fails (disk full, SQLITE_BUSY) must neither crash the worker
// nor lose the job's result, and the execution must stay leased (R14) until its result is out —
// otherwise the broker declares LOST_WORKER and a job that succeeded runs again.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, redisKeys } from '@ax/kit';
import { readRegistration } from '@ax/redis';
import { uniqueNamespace, waitFor } from '@ax/testing';
import { Outbox } from './outbox.js';
import { dispatchItem } from './testing/fixtures.js';
import { startAmqpProxy, startDriver, startTestWorker, type CuttableProxy, type Driver, type TestWorker } from './testing/harness.js';

const namespace = uniqueNamespace('axwf');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-wf-'));
let driver: Driver;
let proxy: CuttableProxy;
const workers: TestWorker[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  driver = await startDriver(namespace);
  proxy = await startAmqpProxy();
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  expect(unhandled, 'no unhandled rejection').toEqual([]);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await proxy.close();
  await driver.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** What better-sqlite3 throws when another connection holds the lock past `busy_timeout`. */
function sqliteBusy(): Error {
  return Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
}

/** An outbox whose result writes, or 'running' marks, fail while a test says so. */
class FlakyOutbox extends Outbox {
  /** While true, every result write (`finishRow`) throws SQLITE_BUSY. */
  failResults = false;
  resultWriteFailures = 0;
  /** The next so many 'running' marks throw SQLITE_BUSY. */
  failStarts = 0;

  override finishRow(...args: Parameters<Outbox['finishRow']>): ReturnType<Outbox['finishRow']> {
    if (this.failResults) {
      this.resultWriteFailures += 1;
      throw sqliteBusy();
    }
    return super.finishRow(...args);
  }

  override setState(...args: Parameters<Outbox['setState']>): void {
    if (args[1] === 'running' && this.failStarts > 0) {
      this.failStarts -= 1;
      throw sqliteBusy();
    }
    super.setState(...args);
  }
}

/** Log lines a worker wrote, parsed. */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ service: 'worker', level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { logger, lines };
}

async function flakyWorker(workerId: string, options: { amqpUrl?: string; slots?: number; logger?: ReturnType<typeof createLogger> } = {}): Promise<{ w: TestWorker; outbox: FlakyOutbox }> {
  let outbox: FlakyOutbox | undefined;
  const w = await startTestWorker({
    driver,
    workerId,
    amqpUrl: options.amqpUrl,
    settings: options.slots === undefined ? {} : { slots: options.slots },
    logger: options.logger,
    openOutbox: (file) => (outbox = new FlakyOutbox({ file })),
  });
  workers.push(w);
  if (outbox === undefined) throw new Error('the harness did not open the injected outbox');
  return { w, outbox };
}

const shell = (script: string) => ({ type: 'shell' as const, command: ['/bin/sh', '-c', script], shell: false });
const resultsOf = (executionId: string) => driver.collected.results.filter((r) => r.executionId === executionId);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('#23 outbox write failures (real RabbitMQ and Redis)', () => {
  it('#23 a result whose outbox write fails (SQLITE_BUSY) is published from memory exactly once, and written (confirmed, not resent) once the outbox heals', async () => {
    const { w, outbox } = await flakyWorker('w-busy');
    outbox.failResults = true;
    const item = dispatchItem({ exec: shell('echo done') });
    await driver.dispatch('w-busy', [item]);

    const result = await waitFor(() => driver.resultOf(item.executionId), { description: 'the result, from memory' });
    expect(result).toMatchObject({ outcome: 'SUCCESS', exitCode: 0, outputTail: 'done\n' });
    expect(outbox.resultWriteFailures).toBeGreaterThan(0);
    expect(outbox.dispatch(item.executionId)?.state).toBe('running'); // the outbox still knows nothing of the end
    await waitFor(() => !w.worker.leaseExecutionIds().includes(item.executionId), { description: 'lease released once confirmed' });

    outbox.failResults = false;
    await waitFor(() => outbox.dispatch(item.executionId)?.state === 'done', { description: 'the outbox write retried', timeoutMs: 10_000 });
    // Written as already confirmed: neither replayed now nor after a restart.
    expect(outbox.unconfirmedCount()).toBe(0);
    expect(outbox.confirmedCounts().result).toBe(1);
    await sleep(500);
    expect(resultsOf(item.executionId)).toHaveLength(1);
  });

  it('#23 R14 with RabbitMQ unreachable too, a result the outbox refused stays leased in the registry until it is out, then arrives exactly once', async () => {
    const { w, outbox } = await flakyWorker('w-busy-outage', { amqpUrl: proxy.url });
    const keys = redisKeys(namespace);
    const item = dispatchItem({ exec: shell('sleep 0.3; echo late') });
    await driver.dispatch('w-busy-outage', [item]);
    await waitFor(() => outbox.dispatch(item.executionId)?.pgid, { description: 'job spawned' });
    outbox.failResults = true;
    await proxy.cut();
    await waitFor(() => outbox.resultWriteFailures > 0, { description: 'the result write failed' });
    const failedAt = Date.now();
    const entry = await waitFor(
      async () => {
        const r = await readRegistration(driver.redis.redis, keys, 'w-busy-outage');
        return r !== null && Date.parse(r.at) > failedAt + 100 ? r : null;
      },
      { description: 'a heartbeat after the failed write' },
    );
    expect(entry.runningExecutionIds).toContain(item.executionId);
    expect(resultsOf(item.executionId)).toHaveLength(0);

    // The outbox heals while the publish is still held by the outage: the write is retried and
    // the row joins the publish in flight instead of being sent a second time.
    outbox.failResults = false;
    await waitFor(() => outbox.dispatch(item.executionId)?.state === 'done', { description: 'the outbox write retried', timeoutMs: 10_000 });
    expect(w.worker.leaseExecutionIds()).toContain(item.executionId);

    await proxy.restore();
    const result = await waitFor(() => driver.resultOf(item.executionId), { description: 'the result after the outage', timeoutMs: 15_000 });
    expect(result).toMatchObject({ outcome: 'SUCCESS', outputTail: 'late\n' });
    await waitFor(() => outbox.unconfirmedCount() === 0, { description: 'outbox confirmed' });
    await waitFor(
      async () => {
        const r = await readRegistration(driver.redis.redis, keys, 'w-busy-outage');
        return r !== null && !r.runningExecutionIds.includes(item.executionId);
      },
      { description: 'lease released' },
    );
    expect(outbox.confirmedCounts().result).toBe(1);
    await sleep(500);
    expect(resultsOf(item.executionId)).toHaveLength(1);
  });

  it('#23 a failed outbox write before the job starts is logged, the slot released, no unhandled rejection; the job is reported FAILED without running', async () => {
    const { logger, lines } = capturingLogger();
    const { w, outbox } = await flakyWorker('w-busy-start', { slots: 1, logger });
    const marker = path.join(tmp, 'waited-ran');
    const first = dispatchItem({ exec: shell('sleep 0.3') });
    const waiting = dispatchItem({ exec: shell(`touch ${marker}`) });
    outbox.failStarts = 1; // the waiting job's 'running' mark (the first is recorded running at accept)
    await driver.dispatch('w-busy-start', [first, waiting]);

    const failed = await waitFor(() => driver.resultOf(waiting.executionId), { description: 'the waiting job reported' });
    expect(failed.outcome).toBe('FAILED');
    expect(failed.error).toMatch(/database is locked/);
    expect(existsSync(marker)).toBe(false);
    expect(driver.resultOf(first.executionId)?.outcome).toBe('SUCCESS');
    expect(lines.some((l) => l.level === 'error' && l.executionId === waiting.executionId)).toBe(true);

    // The slot is free again: the next job runs.
    const next = dispatchItem({ exec: shell('echo next') });
    await driver.dispatch('w-busy-start', [next]);
    expect(await waitFor(() => driver.resultOf(next.executionId), { description: 'the next job' })).toMatchObject({ outcome: 'SUCCESS', outputTail: 'next\n' });
    expect(w.worker.running).toBe(0);
    expect(resultsOf(waiting.executionId)).toHaveLength(1);
  });
});
