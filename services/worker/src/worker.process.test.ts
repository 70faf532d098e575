// Real worker processes (`services/worker/dist/main.js`: run `pnpm build` first).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWorkerCredential } from '@ax/core';
import { redisKeys } from '@ax/kit';
import { readRegistration } from '@ax/redis';
import {
  assertNoLeftoverProcesses,
  freePort,
  missingRequirement,
  repoRoot,
  startProcess,
  stopAllProcesses,
  uniqueNamespace,
  waitFor,
  type ManagedProcess,
} from '@ax/testing';
import { liveGroupMembers } from './process-group.js';
import { dispatchItem } from './testing/fixtures.js';
import { startDriver, type Driver } from './testing/harness.js';

const namespace = uniqueNamespace('axwp');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-proc-'));
const mainJs = path.join(repoRoot(), 'services/worker/dist/main.js');
let driver: Driver;

function hasFaketime(): boolean {
  try {
    execFileSync('faketime', ['-f', '+0s', 'true']);
    return true;
  } catch {
    return false;
  }
}

async function startWorker(name: string, workerId: string, options: { faketime?: string; env?: Record<string, string> } = {}): Promise<ManagedProcess> {
  const port = await freePort();
  const env = {
    AX_NAMESPACE: namespace,
    AX_WORKER_ID: workerId,
    AX_WORKER_DATA_DIR: path.join(tmp, 'data'),
    AX_HTTP_PORT: String(port),
    AX_HEARTBEAT_INTERVAL_MS: '500',
    AX_LEASE_TTL_MS: '2000',
    AX_WORKER_SLOTS: '4',
    AX_PLUGIN_DIR: path.join(tmp, 'plugins'),
    AX_LOG_LEVEL: 'info',
    // The tests here that are not about R25 let jobs write into this root-only test folder.
    AX_JOB_ISOLATION: 'off',
    ...options.env,
  };
  const command = options.faketime === undefined ? process.execPath : 'faketime';
  const args = options.faketime === undefined ? [mainJs] : ['-f', options.faketime, process.execPath, mainJs];
  return startProcess({ name, command, args, env, cwd: tmp, readyLine: 'worker consuming', readyTimeoutMs: 20_000 });
}

beforeAll(async () => {
  driver = await startDriver(namespace);
  mkdirSync(path.join(tmp, 'plugins'));
  writeFileSync(path.join(tmp, 'plugins', 'broken.mjs'), "throw new Error('cannot load me');\n");
});
afterAll(async () => {
  await stopAllProcesses();
  assertNoLeftoverProcesses();
  await driver.close();
  rmSync(tmp, { recursive: true, force: true });
});

const shell = (script: string) => ({ type: 'shell' as const, command: ['/bin/sh', '-c', script], shell: false });

describe('worker processes', () => {
  it('R13 kill -9 during a shell job, restart: the group is killed, WORKER_RESTART reported, never two copies at once', async () => {
    const log = path.join(tmp, 'r13.log');
    const pidFile = path.join(tmp, 'r13.pid');
    const first = await startWorker('worker-r13-a', 'w-r13');
    // A plugin that throws on load is reported by name; the worker still started.
    expect(first.output()).toContain('plugin broken could not be loaded and is skipped');
    const item = dispatchItem({ exec: shell(`echo $$ > ${pidFile}; echo start >> ${log}; sleep 60; echo end >> ${log}`), timeoutSeconds: 120 });
    await driver.dispatch('w-r13', [item]);
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', { description: 'job started' });
    const jobPgid = Number(readFileSync(pidFile, 'utf8').trim());
    await waitFor(() => driver.collected.acks.some((a) => a.executionId === item.executionId), { description: 'ACK' });

    process.kill(first.pid, 'SIGKILL'); // the worker only: the job's own group survives it
    await first.waitExit(5_000);
    expect(liveGroupMembers(jobPgid).length).toBeGreaterThan(0);

    const second = await startWorker('worker-r13-b', 'w-r13');
    const result = await waitFor(() => driver.resultOf(item.executionId), { description: 'WORKER_RESTART result', timeoutMs: 15_000 });
    // The group was killed before the result was written, so it is gone when the result arrives.
    expect(liveGroupMembers(jobPgid)).toEqual([]);
    expect(result).toMatchObject({ outcome: 'WORKER_RESTART' });
    expect(result.error).toContain(`surviving process group ${jobPgid} was killed`);
    expect(readFileSync(log, 'utf8')).toBe('start\n');
    // SIGTERM: stops cleanly, deregisters, exit 0.
    expect(await second.stop({ graceMs: 20_000 })).toEqual({ code: 0, signal: null });
    expect(await readRegistration(driver.redis.redis, redisKeys(namespace), 'w-r13')).toBeNull();
  });

  it.skipIf(missingRequirement(it, { name: 'faketime', present: hasFaketime(), install: 'apt-get install faketime' }))('§5 R8 a worker whose clock is 10 s ahead (faketime) refuses with CLOCK_SKEW and stays out of the registry', async () => {
    const marker = path.join(tmp, 'skewed-ran');
    await startWorker('worker-skewed', 'w-skew', { faketime: '+10s' });
    const item = dispatchItem({ exec: shell(`touch ${marker}`), ackDeadline: new Date(Date.now() + 60_000).toISOString() });
    await driver.dispatch('w-skew', [item]);
    const refusal = await waitFor(() => driver.collected.refusals.find((r) => r.executionId === item.executionId), { description: 'CLOCK_SKEW refusal', timeoutMs: 10_000 });
    expect(refusal.reason).toBe('CLOCK_SKEW');
    expect(refusal.detail).toMatch(/clock offset \d+ ms against Redis TIME/);
    expect(driver.collected.acks.some((a) => a.executionId === item.executionId)).toBe(false);
    expect(await readRegistration(driver.redis.redis, redisKeys(namespace), 'w-skew')).toBeNull();
    expect(existsSync(marker)).toBe(false);
  });

  it('#23 a worker frozen (SIGSTOP) longer than its lease starts nothing it accepted before: the job waiting for a slot is refused EXPIRED, never run', async () => {
    const marker = path.join(tmp, 'frozen-b-ran');
    const proc = await startWorker('worker-frozen', 'w-frozen', { env: { AX_WORKER_SLOTS: '1' } });
    const a = dispatchItem({ exec: shell('sleep 1'), ackDeadline: new Date(Date.now() + 60_000).toISOString() });
    const b = dispatchItem({ exec: shell(`touch ${marker}`), ackDeadline: new Date(Date.now() + 60_000).toISOString() });
    await driver.dispatch('w-frozen', [a, b]);
    // Both accepted and ACKed; b waits for a's slot.
    await waitFor(() => [a, b].every((i) => driver.collected.acks.some((x) => x.executionId === i.executionId)), { description: 'both ACKs' });
    process.kill(proc.pid, 'SIGSTOP'); // the worker only: a's shell runs on in its own group
    await new Promise((r) => setTimeout(r, 3_000)); // lease 2 s: a broker may have given b to another worker
    process.kill(proc.pid, 'SIGCONT');
    const refusal = await waitFor(() => driver.collected.refusals.find((r) => r.executionId === b.executionId), { description: 'b refused', timeoutMs: 10_000 });
    expect(refusal.reason).toBe('EXPIRED');
    expect(refusal.detail).toMatch(/^not started: (no heartbeat reached Redis|the worker's lease may have lapsed)/);
    expect(driver.resultOf(b.executionId)).toBeUndefined();
    expect(await waitFor(() => driver.resultOf(a.executionId), { description: 'a result' })).toMatchObject({ outcome: 'SUCCESS' });
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(marker)).toBe(false);
    expect(proc.output()).toContain('job not started');
    await proc.stop({ graceMs: 10_000 });
  });

  it('a bad variable is one clear line and exit code 2', async () => {
    const bad = await startProcess({ name: 'worker-bad-env', command: process.execPath, args: [mainJs], env: { AX_WORKER_SLOTS: 'many', AX_NAMESPACE: namespace, AX_JOB_ISOLATION: 'off' }, cwd: tmp });
    expect(await bad.waitExit(10_000)).toEqual({ code: 2, signal: null });
    const lines = bad.lines().filter((l) => l.stream === 'stderr');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.text).toContain('AX_WORKER_SLOTS');
  });

  describe('R25 jobs never run as the worker (#44)', () => {
    const ALPHA_UID = 47111;
    const BETA_UID = 47112;
    const canary = 'executor-secret-canary-0c9d41e7';
    // Traversable by every uid: only the modes the worker sets may protect what is inside.
    const open = mkdtempSync(path.join(os.tmpdir(), 'ax-worker-r25-'));
    const secretsDir = path.join(open, 'secrets');
    afterAll(() => rmSync(open, { recursive: true, force: true }));

    const uidsEnv = (): Record<string, string> => ({
      AX_JOB_ISOLATION: 'uid',
      AX_JOB_UIDS: `default=${ALPHA_UID},beta=${BETA_UID}`,
      AX_JOB_DIR: path.join(open, 'jobs'),
      AX_WORKER_DATA_DIR: path.join(open, 'data'),
      AX_SECRETS_DIR: secretsDir,
      AX_EXECUTOR_SECRET: canary,
    });

    it("a shell job of one team dumping /proc/*/environ, the secrets folders and the outbox finds no credential of the worker and no other team's secret", async () => {
      chmodSync(open, 0o755);
      for (const team of ['default', 'beta']) {
        mkdirSync(path.join(secretsDir, team), { recursive: true });
        writeFileSync(path.join(secretsDir, team, 'DB_PASSWORD'), `${team}-team-secret-4b1f\n`, { mode: 0o644 });
        chmodSync(path.join(secretsDir, team), 0o755);
      }
      const proc = await startWorker('worker-r25', 'w-r25', { env: uidsEnv() });
      const outbox = path.join(open, 'data', 'w-r25', 'outbox.db');
      const script = [
        'echo "uid=$(id -u)"',
        'tr "\\0" "\\n" < /proc/$PPID/environ',
        'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done',
        `for f in ${secretsDir}/*/*; do cat "$f"; done`,
        `cat ${outbox} ${outbox}-wal`,
        'env',
        'echo end-of-dump',
      ].join('; ');
      const item = dispatchItem({ exec: shell(script), timeoutSeconds: 60 });
      await driver.dispatch('w-r25', [item]);
      const result = await waitFor(() => driver.resultOf(item.executionId), { description: 'the dump job result', timeoutMs: 30_000 });
      const output = result.outputTail ?? '';
      expect(output).toContain('end-of-dump');
      expect(output).toContain(`uid=${ALPHA_UID}`);
      expect(output).not.toContain(canary);
      expect(output).not.toContain('team-secret-4b1f');
      expect(output).not.toContain('SQLite format');
      // Nothing of the worker's own environment but what every job gets anyway.
      const workerEnv = readFileSync(`/proc/${proc.pid}/environ`, 'utf8')
        .split('\0')
        .filter((line) => line.includes('=') && !/^(PATH|HOME|LANG|LC_ALL|TZ|SHELL|TMPDIR|USER|LOGNAME|AX_SECRETS_DIR)=/.test(line));
      expect(workerEnv.length).toBeGreaterThan(5);
      for (const line of workerEnv) expect(output, 'a variable of the worker leaked').not.toContain(line);
      await proc.stop({ graceMs: 10_000 });
    });

    it('without AX_JOB_UIDS (and no AX_JOB_ISOLATION=off), or with a shared uid, the worker does not start: one line, exit 2', async () => {
      // a production worker is enrolled (#44): this one's credential is never used, it stops at its isolation
      const credentialFile = path.join(tmp, 'r25-credential');
      writeFileSync(credentialFile, `${newWorkerCredential('enr-r25isolation')}\n`, { mode: 0o600 });
      const enrolled = { AX_WORKER_CREDENTIAL_FILE: credentialFile, AX_ADMIN_URL: 'http://127.0.0.1:9' };
      for (const [env, expected] of [
        [{ AX_JOB_ISOLATION: 'uid' }, /^ax: AX_JOB_UIDS is not set: required unless AX_JOB_ISOLATION=off/],
        [{ AX_JOB_UIDS: 'alpha=47120,beta=47120' }, /^ax: AX_JOB_UIDS="alpha=47120,beta=47120" is invalid: .*teams alpha and beta share uid 47120/],
        [{ AX_JOB_UIDS: 'alpha=0' }, /^ax: AX_JOB_UIDS="alpha=0" is invalid: .*never root's 0/],
        [{ AX_JOB_ISOLATION: 'off', NODE_ENV: 'production', AX_HTTP_EXECUTOR_ALLOW: 'x.internal', ...enrolled }, /^ax: AX_JOB_ISOLATION="off" is invalid: off is for development only/],
      ] as const) {
        const bad = await startProcess({ name: 'worker-r25-bad', command: process.execPath, args: [mainJs], env: { AX_NAMESPACE: namespace, AX_JOB_ISOLATION: undefined, ...env }, cwd: tmp });
        expect(await bad.waitExit(10_000)).toEqual({ code: 2, signal: null });
        const lines = bad.lines().filter((l) => l.stream === 'stderr');
        expect(lines, JSON.stringify(env)).toHaveLength(1);
        expect(lines[0]?.text).toMatch(expected);
      }
    });

    it('a worker that cannot switch to the job uids (not root, no capability) refuses to start: one line, exit 2', async () => {
      const bad = await startProcess({
        name: 'worker-r25-nocap',
        command: 'setpriv',
        args: ['--reuid=47130', '--regid=47130', '--clear-groups', process.execPath, mainJs],
        env: { AX_NAMESPACE: namespace, AX_JOB_UIDS: `default=${ALPHA_UID}` },
        cwd: '/',
      });
      expect(await bad.waitExit(10_000)).toEqual({ code: 2, signal: null });
      const lines = bad.lines().filter((l) => l.stream === 'stderr');
      expect(lines).toHaveLength(1);
      expect(lines[0]?.text).toMatch(/^ax: AX_JOB_UIDS cannot be applied: the worker \(uid 47130\) lacks CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID/);
    });
  });
});
