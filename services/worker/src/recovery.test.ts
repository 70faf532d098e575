import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@ax/kit';
import { Outbox } from './outbox.js';
import { isOwnGroup, liveGroupMembers, processStartTime, signalGroup } from './process-group.js';
import { recoverAfterRestart } from './recovery.js';
import { dispatchItem } from './testing/fixtures.js';

const groups: number[] = [];
afterEach(() => {
  for (const pgid of groups.splice(0)) signalGroup(pgid, 'SIGKILL');
});

function detachedSleep(): number {
  const child = spawn('/bin/sh', ['-c', 'sleep 30 & sleep 30'], { detached: true, stdio: 'ignore' });
  child.unref();
  groups.push(child.pid!);
  return child.pid!;
}

describe('restart recovery', () => {
  it('R13 kills a surviving group of its own before reporting WORKER_RESTART; leaves a reused pid alone', async () => {
    const outbox = new Outbox({ file: ':memory:' });
    const ours = detachedSleep();
    const stranger = detachedSleep();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const running = dispatchItem();
    const reused = dispatchItem();
    const queued = dispatchItem();
    const async202 = dispatchItem();
    for (const item of [running, reused, queued, async202]) outbox.recordDispatch(item, 1);
    outbox.setState(running.executionId, 'running', 1);
    outbox.setProcess(running.executionId, ours, processStartTime(ours), 1);
    outbox.setState(reused.executionId, 'running', 1);
    // Same pid, other start time: the pid was reused by an unrelated process.
    outbox.setProcess(reused.executionId, stranger, String(Number(processStartTime(stranger)) - 1_000), 1);
    outbox.setState(queued.executionId, 'acked', 1);
    outbox.finish(async202.executionId, 'done', 'result', { outcome: 'SUCCESS', async: true }, 1);

    expect(isOwnGroup(ours, processStartTime(ours)!)).toBe(true);
    expect(await recoverAfterRestart(outbox, silentLogger(), 500)).toBe(3);
    expect(liveGroupMembers(ours)).toEqual([]);
    expect(liveGroupMembers(stranger).length).toBeGreaterThan(0);
    const results = outbox.due(Number.MAX_SAFE_INTEGER, 10).filter((r) => r.kind === 'result');
    const byId = new Map(results.map((r) => [r.executionId, r.item]));
    expect(byId.get(running.executionId)).toMatchObject({ outcome: 'WORKER_RESTART', error: expect.stringContaining(`surviving process group ${ours} was killed`) as unknown });
    expect(byId.get(reused.executionId)).toMatchObject({ outcome: 'WORKER_RESTART' });
    expect(byId.get(queued.executionId)).toMatchObject({ outcome: 'WORKER_RESTART', error: 'the worker restarted before the job started' });
    // R15: the accepted-async execution keeps its async result; no WORKER_RESTART for it.
    expect(byId.get(async202.executionId)).toEqual({ outcome: 'SUCCESS', async: true });
    expect(outbox.dispatchesIn('running')).toEqual([]);
    outbox.close();
  });
});
