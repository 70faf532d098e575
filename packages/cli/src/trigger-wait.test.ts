/**
 * `axctl tasks trigger NAME --wait [--follow]` end to end: the admin API in-process, a real
 * broker and worker (built services) on the same database, Redis namespace and RabbitMQ
 * namespace, shell jobs that really run. The built binary's exit code is the run's result
 * (0 SUCCESS, 1 otherwise), its stdout the job's output (every attempt's, in order), its
 * stderr the "triggered" line, a line per retry and the summary.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAmqp, startService, stopAllProcesses, type TestAmqp } from '@ax/testing';
import { axctl, killLeftovers, startApp, taskDef, type TestApp } from './axctl.test-helper.js';

let t: TestApp;
let amqp: TestAmqp;
let dataDir: string;

const sh = (script: string): { type: 'shell'; command: string[] } => ({ type: 'shell', command: ['sh', '-c', script] });

beforeAll(async () => {
  t = await startApp();
  amqp = await createTestAmqp(t.namespace);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'axctl-trigger-'));
  const common = { AX_MYSQL_URL: t.db.url, AX_REDIS_URL: t.redis.url, AX_AMQP_URL: amqp.url, AX_NAMESPACE: t.namespace, AX_LOG_LEVEL: 'warn' };
  await startService('broker', { name: 'broker', env: common });
  await startService('worker', { name: 'worker', env: { ...common, AX_WORKER_ID: 'cli-w1', AX_WORKER_SLOTS: '4', AX_WORKER_DATA_DIR: dataDir, AX_LOG_FLUSH_MS: '100' } });
  const tasks = [
    taskDef('ci_ok', { schedule: { type: 'none' }, exec: sh('echo "hello from ci_ok"; sleep 1; echo "to stderr" >&2; echo done') }),
    taskDef('ci_slow', { schedule: { type: 'none' }, exec: sh('echo "slow started"; sleep 30'), timeoutSeconds: 60 }),
    taskDef('ci_fail', {
      schedule: { type: 'none' },
      exec: sh('echo "failing run"; echo "bad thing" >&2; exit 3'),
      retry: { max: 1, backoffSeconds: 1, factor: 1, jitterSeconds: 0 },
    }),
  ];
  for (const body of tasks) expect((await t.call('POST', '/api/v1/tasks', { body })).status).toBe(201);
}, 90_000);

afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  await stopAllProcesses({ graceMs: 5_000 });
  await amqp?.cleanup();
  await t?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

describe('tasks trigger --wait', () => {
  it('--follow streams the output and exits 0 on SUCCESS, with a summary line on stderr', async () => {
    const r = await axctl(t, ['tasks', 'trigger', 'ci_ok', '--wait', '--follow'], { killAfterMs: 60_000 });
    expect(r.stderr).not.toMatch(/retrying|reconnecting/);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('hello from ci_ok\nto stderr\ndone\n');
    expect(r.errLines[0]).toMatch(/^task ci_ok triggered: instance \d+$/);
    expect(r.errLines.at(-1)).toMatch(/^instance \d+ \(ci_ok\) SUCCESS in \S+, attempt 1\/1$/);
  }, 60_000);

  it('--follow of a failing task: each attempt\'s output in turn, exit 1', async () => {
    const r = await axctl(t, ['tasks', 'trigger', 'ci_fail', '--follow'], { killAfterMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('failing run\nbad thing\nfailing run\nbad thing\n');
    expect(r.errLines).toHaveLength(3);
    expect(r.errLines[1]).toMatch(/^--- attempt 2\/2 \(execution [0-9a-f-]{36}\) ---$/);
    expect(r.errLines[2]).toMatch(/^instance \d+ \(ci_fail\) FAILED .*attempt 2\/2/);
  }, 60_000);

  it('--wait without --follow: the triggered line on stdout, the exit code of the result', async () => {
    const [ok, failed] = await Promise.all([
      axctl(t, ['tasks', 'trigger', 'ci_ok', '--wait'], { killAfterMs: 60_000 }),
      axctl(t, ['tasks', 'trigger', 'ci_fail', '--wait', '--json'], { killAfterMs: 60_000 }),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.lines).toEqual([expect.stringMatching(/^task ci_ok triggered: instance \d+$/)]);
    expect(ok.errLines).toEqual([expect.stringMatching(/ SUCCESS /)]);
    expect(failed.code).toBe(1);
    expect((JSON.parse(failed.stdout) as { state: string }).state).toBe('FAILED');
    expect(failed.errLines).toEqual([expect.stringMatching(/^instance \d+ \(ci_fail\) FAILED/)]);
  }, 60_000);

  it('--timeout: stops waiting with exit 124 and says where the run stands; the run goes on (#47)', async () => {
    for (const args of [['--wait'], ['--follow']]) {
      const r = await axctl(t, ['tasks', 'trigger', 'ci_slow', ...args, '--timeout', '3s'], { killAfterMs: 40_000 });
      expect(r.code, r.stderr).toBe(124);
      const id = /instance (\d+)/.exec(r.stdout + r.stderr)?.[1];
      expect(r.errLines.at(-1)).toMatch(new RegExp(`^axctl: tasks trigger: instance ${id} is still (PENDING|DISPATCHED|RUNNING) after 3 s; stopped waiting, the run goes on \\(axctl instances get ${id}\\)$`));
      if (args[0] === '--follow') expect(r.stdout).toBe('slow started\n');
      const still = await t.call('GET', `/api/v1/instances/${id}`);
      expect(['PENDING', 'DISPATCHED', 'RUNNING']).toContain((still.body as { state: string }).state);
      expect((await t.call('POST', `/api/v1/instances/${id}/cancel`)).status).toBe(200);
    }
  }, 90_000);

  it('--timeout: a bad duration, or --timeout without --wait, is a usage error (exit 2)', async () => {
    const [bad, alone] = await Promise.all([
      axctl(t, ['tasks', 'trigger', 'ci_ok', '--wait', '--timeout', 'soon'], { killAfterMs: 30_000 }),
      axctl(t, ['tasks', 'trigger', 'ci_ok', '--timeout', '10s'], { killAfterMs: 30_000 }),
    ]);
    expect([bad.code, bad.errLines]).toEqual([2, ['axctl: --timeout: expected a duration from 1s to 7 days such as 90s, 30m or 2h, got "soon"']]);
    expect([alone.code, alone.errLines]).toEqual([2, ['axctl: tasks trigger: --timeout goes with --wait or --follow']]);
  }, 60_000);
});
