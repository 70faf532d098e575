/**
 * The `python` executor (issue #22): a Python script (`script`, a file) or inline `code` run with
 * the interpreter the task names (`interpreter`, default `python3` on PATH) or the virtualenv
 * `venv` (`<venv>/bin/python`, `VIRTUAL_ENV` set, `<venv>/bin` first on PATH). It runs exactly
 * like a `shell` job (process-job.ts): its own process group recorded before it starts (R13),
 * the group killed at the deadline or on a cancel, stdout/stderr shipped as the job's output,
 * resolved env secretRefs masked.
 *
 * argv: `<python> -- <script> <args…>` (so a script named `-c` is still a file) or
 * `<python> -c <code> <args…>`; `args` are expanded like shell arguments (each one argument,
 * never quoted or split). `PYTHONUNBUFFERED=1` unless the task sets it: output reaches the log
 * as it is printed, not when Python's buffer fills.
 */
import path from 'node:path';
import { expandExecTemplates, type DispatchItem, type PythonExec } from '@ax/core';
import { openWorkspace, type JobSandbox, type JobWorkspace } from './job-sandbox.js';
import { jobTraceparent } from './job-traceparent.js';
import { runProcessJob } from './process-job.js';
import { NO_SECRETS, secretMask, type SecretMask } from './secret-mask.js';
import { hasSecretRef, resolveSecretables, SecretMissingError } from './secrets.js';
import { jobEnv } from './shell.js';
import type { ExecutionOutcome, ExecutionRequest, Executor } from './types.js';

/** The interpreter of a task that names neither `interpreter` nor `venv`. */
export const DEFAULT_PYTHON = 'python3';

/** Options of the python executor. */
export interface PythonExecutorOptions {
  /** Bytes of output kept (`AX_OUTPUT_TAIL_BYTES`). */
  readonly outputTailBytes: number;
  /** Time between SIGTERM and SIGKILL of a timed-out or canceled job; default 5000 ms. */
  readonly killGraceMs?: number;
  /**
   * `AX_SECRETS_DIR`: env secretRefs are read from `<secretsDir>/<team>/<NAME>` of the task's
   * team (secrets.ts); default none — every secretRef fails with SECRET_MISSING.
   */
  readonly secretsDir?: string | undefined;
  /** The worker variables jobs inherit (PATH, HOME, …; never a secret); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** R25: each run's OS identity and working folder (job-sandbox.ts), as for shell jobs. Default none. */
  readonly sandbox?: JobSandbox | undefined;
}

/** The program that runs the task: the venv's python, the named interpreter or `python3`. */
export function pythonProgram(exec: Pick<PythonExec, 'interpreter' | 'venv'>): string {
  if (exec.venv !== undefined) return path.join(exec.venv, 'bin', 'python');
  return exec.interpreter ?? DEFAULT_PYTHON;
}

/** The argv of one run (templates already expanded in `args`). */
export function pythonArgv(exec: PythonExec): string[] {
  const program = pythonProgram(exec);
  return exec.code !== undefined ? [program, '-c', exec.code, ...exec.args] : [program, '--', exec.script ?? '', ...exec.args];
}

/**
 * The job's environment: `jobEnv` (a minimal base, the `AX_*` description of the run, the task's
 * env, `TRACEPARENT`), then the virtualenv's `VIRTUAL_ENV` and PATH (its `bin` before the PATH the job would
 * otherwise get; `PYTHONHOME` dropped, as `activate` does) and `PYTHONUNBUFFERED=1`.
 */
export function pythonEnv(
  item: DispatchItem,
  exec: PythonExec,
  taskEnv: Readonly<Record<string, string>>,
  source: NodeJS.ProcessEnv,
  workspace?: Pick<JobWorkspace, 'dir' | 'tmp' | 'identity'>,
  traceparent: string | null = null,
): Record<string, string> {
  const env = jobEnv(item, taskEnv, source, workspace, traceparent);
  if (exec.venv !== undefined) {
    env.VIRTUAL_ENV = exec.venv;
    const bin = path.join(exec.venv, 'bin');
    env.PATH = env.PATH === undefined || env.PATH === '' ? bin : `${bin}:${env.PATH}`;
    delete env.PYTHONHOME;
  }
  if (taskEnv.PYTHONUNBUFFERED === undefined) env.PYTHONUNBUFFERED = '1';
  return env;
}

/** Creates the python executor. */
export function createPythonExecutor(options: PythonExecutorOptions): Executor {
  const killGraceMs = options.killGraceMs ?? 5_000;
  const source = options.env ?? process.env;

  const runIn = async (request: ExecutionRequest, workspace: JobWorkspace | undefined): Promise<ExecutionOutcome> => {
    const { item } = request;
    let exec: PythonExec;
    let env: Record<string, string>;
    let mask: SecretMask = NO_SECRETS;
    try {
      exec = expandExecTemplates(item.exec, { bizDate: item.bizDate, expectedTime: item.expectedTime, params: item.params }) as PythonExec;
      let taskEnv = (exec.env ?? {}) as Record<string, string>;
      // No secretRef, no filesystem access.
      if (hasSecretRef(exec.env)) {
        const resolved = await resolveSecretables(exec.env ?? {}, { dir: options.secretsDir, team: item.team });
        taskEnv = resolved.values;
        mask = secretMask(resolved.secrets);
      }
      env = pythonEnv(item, exec, taskEnv, source, workspace, jobTraceparent(request));
      request.output?.useMask(mask);
    } catch (error) {
      const message = error instanceof SecretMissingError ? error.message : `cannot prepare the python job: ${(error as Error).message}`;
      return { outcome: 'FAILED', exitCode: null, error: message };
    }
    const cwd = exec.cwd ?? workspace?.dir;
    const job = { argv: pythonArgv(exec), env, cwd, mask, identity: workspace?.identity };
    const outcome = await runProcessJob(request, job, { outputTailBytes: options.outputTailBytes, killGraceMs });
    // 127 from the gate: the interpreter itself is missing; say which and where it came from.
    if (outcome.exitCode === 127 && outcome.outcome === 'FAILED') {
      const program = pythonProgram(exec);
      const where = exec.venv !== undefined ? ` (exec.venv ${JSON.stringify(exec.venv)} has no bin/python)` : '';
      return { ...outcome, error: mask.text(`python interpreter not found: ${program}${where}`) };
    }
    return outcome;
  };

  return {
    async run(request: ExecutionRequest): Promise<ExecutionOutcome> {
      const { item } = request;
      if (item.exec.type !== 'python') throw new Error(`python executor got a ${item.exec.type} exec`);
      // R25: the team's uid and a folder of the run's own, removed once the group is gone.
      const opened = await openWorkspace(options.sandbox, item);
      if (!opened.ok) return opened.outcome;
      try {
        return await runIn(request, opened.workspace);
      } finally {
        await opened.workspace?.dispose();
      }
    },
  };
}
