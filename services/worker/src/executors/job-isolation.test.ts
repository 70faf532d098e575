// #44 R25: jobs never run as the worker. Real shell and python jobs, through the executors the
// worker uses, try what a hostile job of team alpha would try on a worker that also serves beta.
// The tests run as root (as CI does): the numeric uids below need no /etc/passwd entry.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import { Outbox } from '../outbox.js';
import { liveGroupMembers } from '../process-group.js';
import { dispatchItem } from '../testing/fixtures.js';
import { createJobSandbox, lockSecretsDir, type JobSandbox } from './job-sandbox.js';
import { createPythonExecutor } from './python.js';
import { createShellExecutor } from './shell.js';
import type { ExecutionOutcome, ExecutionRequest, Executor, OutputSink } from './types.js';

const ALPHA = { uid: 47101, gid: 47101 };
const BETA = { uid: 47102, gid: 47102 };
const BETA_SECRET = 'beta-only-db-password-7f3a';
const ALPHA_SECRET = 'alpha-own-api-key-19c2';
const WORKER_CANARY = 'amqp://ax:worker-canary-5d1e@rabbit:5672';

const isRoot = process.getuid?.() === 0;
// Everyone may traverse the test folder: only the modes the worker sets may protect what is in it.
const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-isolation-'));
chmodSync(dir, 0o755);
const secretsDir = path.join(dir, 'secrets');
const outboxPath = path.join(dir, 'data', 'w-iso', 'outbox.db');
let sandbox: JobSandbox;
let shell: Executor;
let python: Executor;
let outbox: Outbox;

beforeAll(async () => {
  // Secrets folders as an operator might leave them: world-readable.
  for (const [team, value] of [
    ['alpha', ALPHA_SECRET],
    ['beta', BETA_SECRET],
  ] as const) {
    mkdirSync(path.join(secretsDir, team), { recursive: true, mode: 0o755 });
    writeFileSync(path.join(secretsDir, team, 'DB_PASSWORD'), `${value}\n`, { mode: 0o644 });
    chmodSync(path.join(secretsDir, team), 0o755);
  }
  chmodSync(secretsDir, 0o755);
  await lockSecretsDir(secretsDir);
  outbox = new Outbox({ file: outboxPath });
  sandbox = await createJobSandbox({
    root: path.join(dir, 'jobs'),
    identities: new Map([
      ['alpha', ALPHA],
      ['beta', BETA],
    ]),
  });
  // The worker's own environment holds its credentials; a job must not get them.
  const source = { PATH: process.env.PATH, HOME: '/root', USER: 'root', AX_AMQP_URL: WORKER_CANARY, AX_EXECUTOR_SECRET: 'executor-canary-88aa' };
  shell = createShellExecutor({ outputTailBytes: 65_536, killGraceMs: 500, env: source, secretsDir, sandbox });
  python = createPythonExecutor({ outputTailBytes: 65_536, killGraceMs: 500, env: source, secretsDir, sandbox });
});
afterAll(() => {
  outbox.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly outcome: ExecutionOutcome;
  /** Every byte the job wrote, stdout and stderr. */
  readonly output: string;
}

function request(team: string, script: string, extra: Partial<ExecutionRequest> & { env?: Record<string, string | { secretRef: string }> } = {}): ExecutionRequest {
  const item = dispatchItem({ team, exec: { type: 'shell', command: [script], shell: true, env: extra.env }, timeoutSeconds: 60 });
  return { item, deadlineMs: Date.now() + 60_000, signal: extra.signal ?? new AbortController().signal, ...(extra.onSpawn ? { onSpawn: extra.onSpawn } : {}) };
}

async function run(executor: Executor, req: ExecutionRequest): Promise<Run> {
  const chunks: Buffer[] = [];
  const output: OutputSink = { useMask: () => undefined, write: (_s, data) => void chunks.push(Buffer.from(data)) };
  const outcome = await executor.run({ ...req, output });
  return { outcome, output: Buffer.concat(chunks).toString('utf8') };
}

/** The NAME=value lines of a process's initial environment that a job is not given. */
function environLines(pid: number | string): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter((line) => line.includes('=') && !/^(PATH|HOME|LANG|LC_ALL|TZ|SHELL|TMPDIR)=/.test(line));
}

describe.skipIf(!isRoot)('R25 a job never runs as the worker (executors, as root)', () => {
  it("a job dumping /proc/$PPID/environ and every /proc/*/environ finds none of the worker's variables, nor its own env any credential", async () => {
    const { outcome, output } = await run(
      shell,
      request('alpha', 'tr "\\0" "\\n" < /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done 2>/dev/null; echo; env; echo done'),
    );
    expect(outcome.outcome).toBe('SUCCESS');
    expect(output).toContain('done');
    const worker = environLines(process.pid);
    expect(worker.length).toBeGreaterThan(0);
    for (const line of worker) expect(output, 'a variable of the worker process leaked').not.toContain(line);
    expect(output).not.toContain(WORKER_CANARY);
    expect(output).not.toContain('executor-canary-88aa');
    expect(output).not.toMatch(/^USER=root$/m);
  });

  it("a job reading every secrets folder gets its own team's secret through secretRef and never another team's", async () => {
    const { outcome, output } = await run(
      shell,
      request('alpha', `echo "mine=$MINE"; for f in ${secretsDir}/*/* ${secretsDir}/beta/DB_PASSWORD; do cat "$f"; done; ls -la ${secretsDir}/beta; true`, {
        env: { MINE: { secretRef: 'DB_PASSWORD' } },
      }),
    );
    expect(outcome.outcome).toBe('SUCCESS');
    // Its own secret reached it through its env, once; no file of any folder was readable.
    expect(output).toContain(`mine=${ALPHA_SECRET}`);
    expect(output.split(ALPHA_SECRET)).toHaveLength(2);
    expect(output).not.toContain(BETA_SECRET);
    // The worker locked the folders: the root and each team folder 0700, owned by the worker.
    for (const folder of [secretsDir, path.join(secretsDir, 'alpha'), path.join(secretsDir, 'beta')]) {
      expect(statSync(folder).mode & 0o777, folder).toBe(0o700);
      expect(statSync(folder).uid, folder).toBe(process.getuid?.());
    }
  });

  it("a job's uid differs from the worker's and from another team's job's, and it has no supplementary groups", async () => {
    const alpha = await run(shell, request('alpha', 'echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"'));
    const beta = await run(shell, request('beta', 'echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"'));
    expect(alpha.output.trim()).toBe(`uid=${ALPHA.uid} gid=${ALPHA.gid} groups=${ALPHA.gid}`);
    expect(beta.output.trim()).toBe(`uid=${BETA.uid} gid=${BETA.gid} groups=${BETA.gid}`);
    expect(ALPHA.uid).not.toBe(process.getuid?.());
  });

  it("a python job runs as its team's uid too, with a private working and temp folder", async () => {
    const item = dispatchItem({
      team: 'beta',
      exec: { type: 'python', code: 'import os, tempfile; print(os.getuid(), os.getcwd() == os.environ["HOME"], tempfile.gettempdir().startswith(os.getcwd()))', args: [] },
      timeoutSeconds: 60,
    });
    const { outcome, output } = await run(python, { item, deadlineMs: Date.now() + 60_000, signal: new AbortController().signal });
    expect(outcome.outcome).toBe('SUCCESS');
    expect(output.trim()).toBe(`${BETA.uid} True True`);
  });

  it("a job cannot read the worker's outbox (SQLite file, WAL and folder)", async () => {
    outbox.recordDispatch(dispatchItem({ taskName: 'outbox-canary-task' }), Date.now());
    const folder = path.dirname(outboxPath);
    for (const file of [outboxPath, `${outboxPath}-wal`]) {
      expect(statSync(file).mode & 0o777, file).toBe(0o600);
    }
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    const { output } = await run(shell, request('alpha', `cat ${outboxPath} ${outboxPath}-wal ${outboxPath}-shm; ls ${folder}; true`));
    expect(output).not.toContain('outbox-canary-task');
    expect(output).toMatch(/Permission denied/);
  });

  it("a job cannot signal, inspect or read the files of another team's running job", async () => {
    const stop = new AbortController();
    let pgid = 0;
    const beta = run(shell, request('beta', 'echo beta-private-canary > data.txt; echo ready; sleep 30', { signal: stop.signal, onSpawn: (g) => (pgid = g) }));
    await waitFor(() => pgid > 0 && liveGroupMembers(pgid).length > 0, { description: 'beta job started' });
    let betaDir = '';
    await waitFor(
      () => {
        try {
          betaDir = readlinkSync(`/proc/${pgid}/cwd`);
          return readFileSync(path.join(betaDir, 'data.txt'), 'utf8').includes('beta-private-canary');
        } catch {
          return false;
        }
      },
      { description: 'beta wrote its file' },
    );
    // Its working folder is its own, private, and not the worker's.
    expect(betaDir).not.toBe(process.cwd());
    expect(statSync(betaDir).uid).toBe(BETA.uid);
    expect(statSync(betaDir).mode & 0o077).toBe(0);
    const alpha = await run(
      shell,
      request(
        'alpha',
        [
          `kill -TERM -${pgid} && echo signaled-group`,
          `kill -KILL ${pgid} && echo signaled-leader`,
          `cat ${betaDir}/data.txt /proc/${pgid}/environ /proc/${pgid}/cwd/data.txt`,
          `echo "listing:$(ls ${betaDir} ${path.dirname(betaDir)} 2>/dev/null):end"`,
          'true',
        ].join('; '),
      ),
    );
    expect(alpha.output).not.toContain('signaled');
    expect(alpha.output).not.toContain('beta-private-canary');
    expect(alpha.output).toContain('listing::end');
    expect(alpha.output).toMatch(/Permission denied|Operation not permitted/);
    expect(liveGroupMembers(pgid).length).toBeGreaterThan(0);
    stop.abort('cancel');
    const done = await beta;
    expect(done.outcome.outcome).toBe('CANCELED');
  });

  it("each run gets its own working and temp folder, removed when it ends", async () => {
    const first = await run(shell, request('alpha', 'echo "$(pwd) $TMPDIR $HOME"; touch "$TMPDIR/left-over"; mkdir -p sub/deeper; chmod 000 sub'));
    const second = await run(shell, request('alpha', 'echo "$(pwd)"'));
    const [cwd, tmp, home] = first.output.trim().split(' ');
    expect(cwd).toBe(home);
    expect(tmp).toBe(path.join(cwd ?? '', 'tmp'));
    expect(second.output.trim()).not.toBe(cwd);
    expect(() => statSync(cwd ?? '')).toThrow();
  });

  it('a job of a team without an OS identity on this worker never starts', async () => {
    let spawned = false;
    const { outcome } = await run(shell, request('gamma', 'echo should-not-run', { onSpawn: () => (spawned = true) }));
    expect(outcome).toMatchObject({ outcome: 'FAILED', exitCode: null });
    expect(outcome.error).toMatch(/team "gamma" has no job uid on this worker \(AX_JOB_UIDS\)/);
    expect(spawned).toBe(false);
  });
});
