/**
 * One job run as a program in its own process group (R13), shared by the `shell` and `python`
 * executors: started through a gate, recorded by `onSpawn` before it runs, its stdout and
 * stderr shipped as the attempt's output (and kept as a bounded tail), its resolved secrets
 * masked; at the deadline or on a cancel the group gets SIGTERM, a grace, then SIGKILL —
 * grandchildren included — and the outcome is reported once every member is gone.
 *
 * R13: the gate is `/bin/sh -c 'read go || exit 125; exec "$@"'`: the group exists, is recorded
 * by `onSpawn`, and only then is told to go (one line on stdin). A worker that dies before
 * recording closes the pipe and the gate exits without running the job.
 */
import { spawn } from 'node:child_process';
import { terminateGroup } from '../process-group.js';
import type { JobIdentity } from './job-sandbox.js';
import { OutputTail } from './output-tail.js';
import { maskOutcome, type SecretMask } from './secret-mask.js';
import { recordGroupAndArm } from './spawn-gate.js';
import { stoppedOutcome, type ExecutionOutcome, type ExecutionRequest } from './types.js';

const GATE = 'IFS= read -r _ax_go || exit 125; exec "$@"';

/** What to run, prepared by the executor (templates expanded, secrets resolved). */
export interface ProcessJob {
  /** Program and arguments (the program is looked up on `env.PATH` by the gate's `exec`). */
  readonly argv: readonly string[];
  /** The job's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Working directory; default the worker's. */
  readonly cwd?: string | undefined;
  /** R25: the team's uid and gid the whole group runs under (no supplementary group); default the worker's. */
  readonly identity?: JobIdentity | undefined;
  /** The run's secret values, masked in the tail and the outcome (the log masks on its own). */
  readonly mask: SecretMask;
}

/** Options of `runProcessJob`. */
export interface ProcessJobOptions {
  /** Bytes of output kept as the result's tail (`AX_OUTPUT_TAIL_BYTES`). */
  readonly outputTailBytes: number;
  /** Time between SIGTERM and SIGKILL of a timed-out or canceled job. */
  readonly killGraceMs: number;
}

/**
 * Runs `job` for `request` and resolves with its outcome (never rejects). Exit codes 127 and
 * 126 are reported as `command not found` / `command not executable` naming `argv[0]`.
 */
export function runProcessJob(request: ExecutionRequest, job: ProcessJob, options: ProcessJobOptions): Promise<ExecutionOutcome> {
  const { item } = request;
  const { argv, mask } = job;
  const tail = new OutputTail(options.outputTailBytes);
  const started = Date.now();

  return new Promise<ExecutionOutcome>((resolve) => {
    let settled = false;
    let timedOut = false;
    let stopReason: unknown;
    let killing: Promise<void> | undefined;
    let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const child = spawn('/bin/sh', ['-c', GATE, 'ax-job', ...argv], {
      cwd: job.cwd,
      env: job.env,
      // libuv drops the supplementary groups (setgroups(0)) before setgid and setuid.
      ...(job.identity !== undefined ? { uid: job.identity.uid, gid: job.identity.gid } : {}),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pgid = child.pid;
    const finish = (outcome: ExecutionOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
      resolve({
        ...maskOutcome(mask, outcome),
        outputTail: tail.text(mask),
        outputTruncated: tail.truncated,
      });
    };
    const kill = (): void => {
      if (pgid !== undefined && killing === undefined) killing = terminateGroup(pgid, options.killGraceMs);
    };
    const onAbort = (): void => {
      stopReason = request.signal.reason;
      kill();
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        kill();
      },
      Math.max(0, request.deadlineMs - started),
    );
    // The tail mixes both streams (the result's quick view); the log keeps them apart.
    const output = request.output;
    child.stdout.on('data', (chunk: Buffer) => {
      tail.push(chunk);
      output?.write('stdout', chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      tail.push(chunk);
      output?.write('stderr', chunk);
    });
    child.stdin.on('error', () => undefined); // EPIPE when the job exits without reading stdin
    child.on('error', (error: NodeJS.ErrnoException) => {
      finish({ outcome: 'FAILED', exitCode: null, error: `cannot start the command: ${error.message}` });
    });
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
    });
    child.on('close', () => {
      void (async () => {
        // A timed-out or canceled group is only reported once every member is gone.
        if (killing !== undefined) await killing;
        const info = exitInfo ?? { code: null, signal: null };
        if (timedOut) {
          finish({ outcome: 'TIMEOUT', exitCode: info.code, error: `timed out after ${item.timeoutSeconds} s; the process group was killed` });
        } else if (stopReason !== undefined) {
          finish({ ...stoppedOutcome(stopReason), exitCode: info.code });
        } else if (info.code === 0) {
          finish({ outcome: 'SUCCESS', exitCode: 0 });
        } else if (info.code === 127) {
          finish({ outcome: 'FAILED', exitCode: 127, error: `command not found: ${argv[0] ?? ''}` });
        } else if (info.code === 126) {
          finish({ outcome: 'FAILED', exitCode: 126, error: `command not executable: ${argv[0] ?? ''}` });
        } else if (info.code !== null) {
          finish({ outcome: 'FAILED', exitCode: info.code, error: `exited with code ${info.code}` });
        } else {
          finish({ outcome: 'FAILED', exitCode: null, error: `killed by ${info.signal ?? 'a signal'}` });
        }
      })();
    });
    if (pgid === undefined) return; // 'error' follows
    // R13: record the group before the job starts, then open the gate.
    if (!recordGroupAndArm(pgid, request, onAbort, finish)) return;
    child.stdin.end('go\n');
  });
}
