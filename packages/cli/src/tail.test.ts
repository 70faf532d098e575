/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   API answers are untyped JSON here; the assertions check their shape. */
/**
 * `axctl tail` as a real process: it prints an instance's events, then new ones as they
 * happen, until Ctrl-C (exit 0); in list mode it prints the events of instances created after
 * it started; `--timeout` bounds it; an unknown instance fails (exit 1).
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import { axctl, axctlIn, killLeftovers, requestCount, startApp, taskDef, type AxctlResult, type TestApp } from './axctl.test-helper.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
  await t.call('POST', '/api/v1/tasks', { body: taskDef('tail_a', { schedule: { type: 'none' } }) });
  await t.call('POST', '/api/v1/tasks', { body: taskDef('tail_b', { schedule: { type: 'none' } }) });
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  await t?.close();
});

async function trigger(task: string): Promise<string> {
  const res = await t.call('POST', `/api/v1/tasks/${task}/trigger`, { token: t.tokens.operator });
  expect(res.status).toBe(202);
  return String(res.body.id);
}

/** Starts `axctl tail …`, collecting stdout; `interrupt()` sends Ctrl-C (SIGINT). */
function startTail(args: string[]): { out: () => string; interrupt: () => void; done: Promise<AxctlResult> } {
  let text = '';
  let child: ChildProcess | undefined;
  const done = axctl(t, ['tail', '--interval', '0.2', '--timeout', '30', ...args], { onStdout: (d) => (text += d), onSpawn: (c) => (child = c) });
  return { out: () => text, interrupt: () => child?.kill('SIGINT'), done };
}

describe('tail', () => {
  it('--instance prints the events so far, then new ones; Ctrl-C ends it with exit 0', async () => {
    const id = await trigger('tail_a');
    const events = (await t.call('GET', `/api/v1/instances/${id}`)).body.events as Array<{ type: string }>;
    expect(events.length).toBeGreaterThan(0);
    const polls = await requestCount(t, 'GET', '/api/v1/instances/{id}');
    const tail = startTail(['--instance', id]);
    await waitFor(async () => (await requestCount(t, 'GET', '/api/v1/instances/{id}')) > polls, { timeoutMs: 15_000, description: 'tail polls' });
    await waitFor(() => tail.out().split('\n').filter((l) => l !== '').length >= events.length, { timeoutMs: 15_000, description: 'history printed' });
    expect(tail.out()).not.toContain('CANCELED');
    await t.call('POST', `/api/v1/instances/${id}/cancel`, { token: t.tokens.operator });
    await waitFor(() => tail.out().includes('CANCELED'), { timeoutMs: 15_000, description: 'the cancel event' });
    tail.interrupt();
    const r = await tail.done;
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.lines;
    // each event once, in order, each line: time, instance, task, type
    const after = (await t.call('GET', `/api/v1/instances/${id}`)).body.events as Array<{ type: string; at: string }>;
    expect(lines.map((l) => l.split(/\s+/).slice(0, 4).join(' '))).toEqual(after.map((e) => `${e.at} ${id} tail_a ${e.type}`));
  });

  it('--task --json prints the events of instances that appear after it started, one JSON per line', async () => {
    const old = await trigger('tail_b');
    const polls = await requestCount(t, 'GET', '/api/v1/instances');
    const tail = startTail(['--task', 'tail_b', '--json']);
    await waitFor(async () => (await requestCount(t, 'GET', '/api/v1/instances')) > polls, { timeoutMs: 15_000, description: 'first poll' });
    const fresh = await trigger('tail_b');
    await trigger('tail_a'); // another task: not shown
    await waitFor(() => tail.out().includes(`"instanceId":"${fresh}"`), { timeoutMs: 15_000, description: 'the new instance' });
    await t.call('POST', `/api/v1/instances/${old}/cancel`, { token: t.tokens.operator });
    await waitFor(() => tail.out().includes(`"instanceId":"${old}"`), { timeoutMs: 15_000, description: 'the change of an instance known at start' });
    tail.interrupt();
    const r = await tail.done;
    expect(r.code).toBe(0);
    const events = r.lines.map((l) => JSON.parse(l) as { instanceId: string; taskName: string; type: string; at: string });
    expect(new Set(events.map((e) => e.taskName))).toEqual(new Set(['tail_b']));
    const ofOld = events.filter((e) => e.instanceId === old).map((e) => e.type);
    expect(ofOld).toEqual(['CANCELED']);
    const detail = (await t.call('GET', `/api/v1/instances/${fresh}`)).body.events as Array<{ type: string }>;
    expect(events.filter((e) => e.instanceId === fresh).map((e) => e.type)).toEqual(detail.map((e) => e.type));
  });

  it('--timeout ends it by itself with exit 0; an unknown instance exits 1', async () => {
    const started = Date.now();
    const r = await axctlIn(t, ['tail', '--timeout', '0.6', '--interval', '0.2']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(await axctlIn(t, ['tail', '--instance', '999999', '--timeout', '5'])).toMatchObject({ code: 1, errLines: ['axctl: tail: instance "999999" does not exist (404 NOT_FOUND)'] });
    expect(await axctlIn(t, ['tail', '--instance', '1', '--task', 'x'])).toMatchObject({ code: 2, errLines: ['axctl: tail: give --instance or --task, not both'] });
  });
});
