import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import { liveGroupMembers } from '../process-group.js';
import { dispatchItem } from '../testing/fixtures.js';
import { createShellExecutor } from './shell.js';
import type { ExecutionRequest } from './types.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-shell-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// <AX_SECRETS_DIR>/<team>/<NAME> (ADMIN-API.md "Secrets").
const secretsDir = path.join(dir, 'secrets');
mkdirSync(path.join(secretsDir, 'default'), { recursive: true });
writeFileSync(path.join(secretsDir, 'default', 'MY_TOKEN'), 's3cret-token\n');

/** Alive = exists and is not a zombie (an orphan's reaper may be slow). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const executor = createShellExecutor({ outputTailBytes: 1024, killGraceMs: 1_000, env: { PATH: process.env.PATH }, secretsDir });

function request(command: string[], overrides: Partial<ExecutionRequest> & { timeoutSeconds?: number; shell?: boolean; env?: Record<string, string | { secretRef: string }>; cwd?: string; params?: Record<string, unknown>; team?: string } = {}): ExecutionRequest {
  const item = dispatchItem({
    team: overrides.team ?? 'default',
    exec: { type: 'shell', command, shell: overrides.shell ?? false, env: overrides.env, cwd: overrides.cwd },
    timeoutSeconds: overrides.timeoutSeconds ?? 30,
    params: overrides.params ?? {},
  });
  return { item, deadlineMs: Date.now() + item.timeoutSeconds * 1000, signal: overrides.signal ?? new AbortController().signal, onSpawn: overrides.onSpawn };
}

describe('shell executor', () => {
  it('#23 a job that mayStart refuses at its gate never runs its command; its process group is killed', async () => {
    const marker = path.join(dir, 'gate-refused-ran');
    let pgid = 0;
    const outcome = await executor.run({
      ...request(['/bin/sh', '-c', `touch ${marker}`], { onSpawn: (g) => (pgid = g) }),
      mayStart: () => 'the worker was frozen',
    });
    expect(outcome).toMatchObject({ outcome: 'FAILED', notStarted: true, error: 'not started: the worker was frozen' });
    expect(pgid).toBeGreaterThan(0);
    await waitFor(() => liveGroupMembers(pgid).length === 0, { description: 'group gone' });
    expect(existsSync(marker)).toBe(false);
  });

  it('runs an argv without a shell, with templates, env, secretRef and cwd', async () => {
    const out = await executor.run(
      request(['/bin/sh', '-c', 'test "$TOKEN" = s3cret-token && echo "$1 $FOO token-ok $AX_BIZ_DATE $(pwd)"; echo err >&2', 'x', '{{params.word}};rm -rf /'], {
        env: { FOO: 'bar', TOKEN: { secretRef: 'MY_TOKEN' } },
        cwd: dir,
        params: { word: 'hello' },
      }),
    );
    expect(out).toMatchObject({ outcome: 'SUCCESS', exitCode: 0, outputTruncated: false });
    expect(out.outputTail).toBe(`hello;rm -rf / bar token-ok 2026-12-01 ${dir}\nerr\n`);
  });

  it('#48 gives the job TRACEPARENT: the execution span\'s when tracing is on, else the run\'s context; over a task\'s own, normalized, none without a valid one', async () => {
    const run = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const span = '00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01';
    const print = (overrides: Parameters<typeof request>[1] = {}, itemTrace?: string): ExecutionRequest => {
      const r = request(['/bin/sh', '-c', 'echo "tp=${TRACEPARENT-unset}"'], overrides);
      return { ...r, item: { ...r.item, ...(itemTrace === undefined ? {} : { traceparent: itemTrace }) } };
    };
    expect((await executor.run({ ...print({}, run), traceparent: span })).outputTail).toBe(`tp=${span}\n`);
    expect((await executor.run(print({}, run))).outputTail).toBe(`tp=${run}\n`);
    // The run's context wins over a TRACEPARENT the task sets; a task's own stays when the run has none.
    expect((await executor.run(print({ env: { TRACEPARENT: 'mine' } }, run))).outputTail).toBe(`tp=${run}\n`);
    expect((await executor.run(print({ env: { TRACEPARENT: 'mine' } }))).outputTail).toBe('tp=mine\n');
    expect((await executor.run(print({}, `${run.toUpperCase()}`))).outputTail).toBe('tp=unset\n');
    expect((await executor.run(print({}, ` ${run} `))).outputTail).toBe(`tp=${run}\n`);
    expect((await executor.run(print())).outputTail).toBe('tp=unset\n');
  });

  it('runs through /bin/sh when shell: true', async () => {
    const out = await executor.run(request(['echo', 'a', '&&', 'echo', 'b'], { shell: true }));
    expect(out.outputTail).toBe('a\nb\n');
  });

  it('#18.5 under shell: true a param is one literal word: ";", $( ), backquotes, a newline or a quote in it run nothing', async () => {
    const attacks: Array<(file: string) => string> = [
      (file) => `a; touch ${file}`,
      (file) => `$(touch ${file})`,
      (file) => `\`touch ${file}\``,
      (file) => `a\ntouch ${file}`,
      (file) => `'; touch ${file}; '`,
      (file) => `" | touch ${file} & *`,
    ];
    const seen: unknown[] = [];
    const expected: unknown[] = [];
    for (const [i, attack] of attacks.entries()) {
      const file = path.join(dir, `injected-${i}`);
      const x = attack(file);
      const out = await executor.run(request(['printf', "'%s\\n'", '{{params.x}}'], { shell: true, params: { x } }));
      seen.push({ x, outcome: out.outcome, output: out.outputTail, created: existsSync(file) });
      expected.push({ x, outcome: 'SUCCESS', output: `${x}\n`, created: false });
    }
    expect(seen).toEqual(expected);
  });

  it('#18.5 under shell: true a placeholder inside quotes fails the attempt, naming the element, and runs nothing', async () => {
    const file = path.join(dir, 'quoted-ran');
    const out = await executor.run(request(['touch', file, ';', 'echo', '"{{params.x}}"'], { shell: true, params: { x: '$(id)' } }));
    expect(out).toMatchObject({ outcome: 'FAILED', exitCode: null });
    expect(out.error).toMatch(/^cannot prepare the command: exec\.command\[4\]: placeholder "\{\{params\.x\}\}" is inside double quotes; /);
    expect(existsSync(file)).toBe(false);
  });

  it('#18.5 without shell the same params stay one argv entry each, as they are', async () => {
    const file = path.join(dir, 'argv-injected');
    const values = [`a; touch ${file}`, `$(touch ${file})`, `\`touch ${file}\``, `'"*`];
    const out = await executor.run(request(['printf', '%s|', '{{params.a}}', '{{params.b}}', '{{params.c}}', '{{params.d}}'], { params: { a: values[0], b: values[1], c: values[2], d: values[3] } }));
    expect(out.outputTail).toBe(values.map((v) => `${v}|`).join(''));
    expect(existsSync(file)).toBe(false);
  });

  it('reports a failing exit code and a missing command as failed attempts, naming them', async () => {
    expect(await executor.run(request(['/bin/sh', '-c', 'exit 3']))).toMatchObject({ outcome: 'FAILED', exitCode: 3, error: 'exited with code 3' });
    const missing = await executor.run(request(['no-such-command-ax']));
    expect(missing).toMatchObject({ outcome: 'FAILED', exitCode: 127, error: 'command not found: no-such-command-ax' });
    const secret = await executor.run(request(['true'], { env: { X: { secretRef: 'NOT_SET_ANYWHERE' } } }));
    expect(secret).toMatchObject({ outcome: 'FAILED', exitCode: null, error: 'SECRET_MISSING: secret "NOT_SET_ANYWHERE" is not in the secrets folder of team "default"' });
    const cwd = await executor.run(request(['true'], { cwd: path.join(dir, 'missing') }));
    expect(cwd.outcome).toBe('FAILED');
    expect(cwd.error).toMatch(/cannot start the command/);
  });

  it('keeps a bounded output tail and marks the truncation', async () => {
    const out = await executor.run(request(['/bin/sh', '-c', 'i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); done']));
    expect(Buffer.byteLength(out.outputTail ?? '')).toBeLessThanOrEqual(1024);
    expect(out.outputTruncated).toBe(true);
    expect(out.outputTail).toMatch(/line 299\n$/);
  });

  it('R13 records the process group before the job starts', async () => {
    const marker = path.join(dir, 'started');
    const seen: Array<{ pgid: number; start: string; jobStarted: boolean }> = [];
    const out = await executor.run(
      request(['/bin/sh', '-c', `touch ${marker}`], {
        onSpawn: (pgid, start) => {
          let jobStarted = true;
          try {
            readFileSync(marker);
          } catch {
            jobStarted = false;
          }
          seen.push({ pgid, start, jobStarted });
        },
      }),
    );
    expect(out.outcome).toBe('SUCCESS');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.jobStarted).toBe(false);
    expect(seen[0]?.start).toMatch(/^\d+$/);
  });

  it('timeout kills a grandchild too and reports TIMEOUT (no process left)', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    let pgid = 0;
    // The grandchild ignores SIGTERM: only the SIGKILL of the group after the grace ends it.
    const script = `(trap '' TERM; sleep 60) & echo $! > ${pidFile}; wait`;
    const out = await executor.run(request(['/bin/sh', '-c', script], { timeoutSeconds: 1, onSpawn: (g) => (pgid = g) }));
    expect(out.outcome).toBe('TIMEOUT');
    expect(out.error).toMatch(/timed out after 1 s/);
    const grandchild = Number(readFileSync(pidFile, 'utf8').trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(liveGroupMembers(pgid)).toEqual([]);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('a cancel kills the running job and reports CANCELED', async () => {
    const controller = new AbortController();
    let pgid = 0;
    const running = executor.run(request(['sleep', '30'], { signal: controller.signal, onSpawn: (g) => (pgid = g) }));
    await waitFor(() => pgid > 0 && liveGroupMembers(pgid).length > 0, { description: 'job running' });
    controller.abort('cancel');
    expect(await running).toMatchObject({ outcome: 'CANCELED' });
    expect(liveGroupMembers(pgid)).toEqual([]);
  });
});

describe('#18 secrets: shell jobs', () => {
  const teams = path.join(dir, 'team-secrets');
  mkdirSync(path.join(teams, 'team-a'), { recursive: true });
  mkdirSync(path.join(teams, 'team-b'), { recursive: true });
  mkdirSync(path.join(dir, 'elsewhere'));
  writeFileSync(path.join(teams, 'team-a', 'X'), 'alpha-secret-1111\n');
  writeFileSync(path.join(teams, 'team-b', 'X'), 'bravo-secret-2222\n');
  writeFileSync(path.join(dir, 'elsewhere', 'X'), 'elsewhere-value-3333');
  symlinkSync(path.join(dir, 'elsewhere', 'X'), path.join(teams, 'team-a', 'ESCAPE'));
  // The worker's own environment holds values a task must never reach through a secretRef.
  const workerEnv = {
    PATH: process.env.PATH,
    HOME: '/home/ax-worker-home',
    AX_EXECUTOR_SECRET: 'master-executor-secret-0123456789',
    AX_REDIS_URL: 'redis://:redis-pass-0123@redis:6379',
    AX_AMQP_URL: 'amqp://ax:amqp-pass-0123@rabbitmq:5672',
    AX_NAMESPACE: 'prod-namespace',
  };
  const secretsExecutor = createShellExecutor({ outputTailBytes: 1024, killGraceMs: 1_000, env: workerEnv, secretsDir: teams });

  it('#18 secrets: a secretRef to AX_EXECUTOR_SECRET, any AX_* or HOME fails SECRET_MISSING and the job does not run, even when the worker has it', async () => {
    for (const name of ['AX_EXECUTOR_SECRET', 'AX_REDIS_URL', 'AX_AMQP_URL', 'AX_NAMESPACE', 'HOME', 'PATH']) {
      const marker = path.join(dir, `ran-${name}`);
      const out = await secretsExecutor.run(request(['/bin/sh', '-c', `printenv X; touch ${marker}`], { env: { X: { secretRef: name } }, team: 'team-a' }));
      expect(out).toMatchObject({ outcome: 'FAILED', exitCode: null, error: `SECRET_MISSING: secret "${name}" is not in the secrets folder of team "team-a"` });
      expect(JSON.stringify(out)).not.toMatch(/master-executor|redis-pass|amqp-pass|prod-namespace|ax-worker-home/);
      expect(existsSync(marker)).toBe(false);
    }
  });

  it('#18 secrets: ../other-team/X, a/b, .. and a symlink out of the folder are refused, naming the secret and no path', async () => {
    for (const [name, why] of [
      ['../team-b/X', /is not a valid secret name/],
      ['../other-team/X', /is not a valid secret name/],
      ['a/b', /is not a valid secret name/],
      ['..', /is not a valid secret name/],
      ['ESCAPE', /of team "team-a" is refused: it leads outside the team's folder$/],
    ] as const) {
      const out = await secretsExecutor.run(request(['printenv', 'X'], { env: { X: { secretRef: name } }, team: 'team-a' }));
      expect(out.outcome).toBe('FAILED');
      expect(out.error).toMatch(new RegExp(`^SECRET_MISSING: secret ${JSON.stringify(name).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `));
      expect(out.error).toMatch(why);
      expect(out.error).not.toContain(dir);
      expect(JSON.stringify(out)).not.toMatch(/bravo-secret|elsewhere-value/);
    }
  });

  it('#18 secrets: a job of team A gets A\'s file and team B\'s job B\'s, same NAME', async () => {
    const check = (value: string): string[] => ['/bin/sh', '-c', `test "$X" = ${value} && echo same || echo different`];
    expect((await secretsExecutor.run(request(check('alpha-secret-1111'), { env: { X: { secretRef: 'X' } }, team: 'team-a' }))).outputTail).toBe('same\n');
    expect((await secretsExecutor.run(request(check('bravo-secret-2222'), { env: { X: { secretRef: 'X' } }, team: 'team-b' }))).outputTail).toBe('same\n');
    const unknownTeam = await secretsExecutor.run(request(check('alpha-secret-1111'), { env: { X: { secretRef: 'X' } }, team: 'team-c' }));
    expect(unknownTeam).toMatchObject({ outcome: 'FAILED', error: 'SECRET_MISSING: secret "X" is not in the secrets folder of team "team-c"' });
  });

  it('#18 secrets: printenv X and echo $X show *** in the output tail, stdout and stderr, and in the error', async () => {
    const printenv = await secretsExecutor.run(request(['printenv', 'X'], { env: { X: { secretRef: 'X' } }, team: 'team-a' }));
    expect(printenv).toMatchObject({ outcome: 'SUCCESS', outputTail: '***\n' });
    const echo = await secretsExecutor.run(
      request(['echo', 'out:', '$X', '&&', 'echo', 'err:$X', '>&2', '&&', 'exit', '3'], { shell: true, env: { X: { secretRef: 'X' }, MODE: 'literal' }, team: 'team-a' }),
    );
    expect(echo).toMatchObject({ outcome: 'FAILED', exitCode: 3, outputTail: 'out: ***\nerr:***\n' });
    // A program named by the secret value: "command not found: <value>" is masked too.
    const named = await secretsExecutor.run(request(['/bin/sh', '-c', 'exec "$X"'], { env: { X: { secretRef: 'X' } }, team: 'team-a' }));
    expect(named.outcome).toBe('FAILED');
    expect(JSON.stringify(named)).not.toContain('alpha-secret-1111');
    expect(named.outputTail).toContain('***');
  });

  it('#18 secrets: a value at the tail\'s truncation boundary never shows in clear', async () => {
    const small = createShellExecutor({ outputTailBytes: 64, killGraceMs: 1_000, env: workerEnv, secretsDir: teams });
    for (const pad of [50, 55, 60, 63, 64, 70, 200]) {
      // The value first, then padding: the last 64 bytes begin inside the value for pads below 64.
      const script = `printf '%s' "$X"; head -c ${pad} /dev/zero | tr '\\0' '.'; printf '\\n'`;
      const out = await small.run(request(['/bin/sh', '-c', script], { env: { X: { secretRef: 'X' } }, team: 'team-a' }));
      expect(out.outcome).toBe('SUCCESS');
      expect(out.outputTail).not.toMatch(/alpha|secret|1111|111|-s/);
      expect(Buffer.byteLength(out.outputTail ?? '')).toBeLessThanOrEqual(64);
    }
  });

  it('#18 secrets: without AX_SECRETS_DIR every secretRef fails, jobs without one run as before', async () => {
    const none = createShellExecutor({ outputTailBytes: 1024, killGraceMs: 1_000, env: workerEnv });
    expect(await none.run(request(['printenv', 'X'], { env: { X: { secretRef: 'X' } }, team: 'team-a' }))).toMatchObject({
      outcome: 'FAILED',
      error: 'SECRET_MISSING: secret "X" of team "team-a" cannot be read: AX_SECRETS_DIR is not set on this worker',
    });
    expect(await none.run(request(['printenv', 'X'], { env: { X: 'literal-value' }, team: 'team-a' }))).toMatchObject({ outcome: 'SUCCESS', outputTail: 'literal-value\n' });
  });
});
