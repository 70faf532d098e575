/**
 * The `shell` executor (§5): runs the task's argv (templates expanded, no shell unless
 * `shell: true`) in its own process group, with a timeout that SIGTERMs the group, waits a
 * grace, then SIGKILLs it — grandchildren included.
 *
 * #18.5: under `shell: true` `expandExecTemplates` has already written every template value as
 * one single-quoted shell word (and refused a placeholder inside quotes); the elements are
 * joined with single spaces, the script that check was made on. In argv form values are
 * separate arguments and are never quoted.
 *
 * R13: the job is started through a gate (process-job.ts, shared with the `python` executor):
 * the group exists, is recorded by `onSpawn`, and only then is told to go.
 */
import { expandExecTemplates, type DispatchItem, type ShellExec } from '@ax/core';
import { openWorkspace, type JobSandbox, type JobWorkspace } from './job-sandbox.js';
import { jobTraceparent } from './job-traceparent.js';
import { runProcessJob } from './process-job.js';
import { NO_SECRETS, secretMask, type SecretMask } from './secret-mask.js';
import { hasSecretRef, resolveSecretables, SecretMissingError } from './secrets.js';
import type { ExecutionOutcome, ExecutionRequest, Executor } from './types.js';

/** Options of the shell executor. */
export interface ShellExecutorOptions {
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
  /**
   * R25: each run's OS identity and working folder (job-sandbox.ts). Default none: the job runs
   * as the worker in the worker's working directory (tests of other concerns only).
   */
  readonly sandbox?: JobSandbox | undefined;
}

/** Variables of the worker passed on to jobs (never the worker's secrets). */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'LD_PRELOAD', 'FAKETIME'];

/**
 * The job's environment: a minimal base, the `AX_*` description of the run, then the task's env
 * with its secretRefs already resolved (`taskEnv`), then the run's W3C `TRACEPARENT` when it has
 * one (`jobTraceparent`; the run's context wins over a task's own, as for an HTTP job's header). In
 * a workspace (R25) HOME is the run's folder and TMPDIR its `tmp/` (unless the task sets them);
 * under a team's uid USER and LOGNAME, which would name the worker's user, are not passed on.
 */
export function jobEnv(
  item: DispatchItem,
  taskEnv: Readonly<Record<string, string>>,
  source: NodeJS.ProcessEnv,
  workspace?: Pick<JobWorkspace, 'dir' | 'tmp' | 'identity'>,
  traceparent: string | null = null,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  if (workspace !== undefined) {
    env.HOME = workspace.dir;
    env.TMPDIR = workspace.tmp;
    if (workspace.identity !== undefined) {
      delete env.USER;
      delete env.LOGNAME;
    }
  }
  Object.assign(env, {
    AX_EXECUTION_ID: item.executionId,
    AX_INSTANCE_ID: item.instanceId,
    AX_TASK_NAME: item.taskName,
    AX_BIZ_DATE: item.bizDate,
    AX_EXPECTED_TIME: item.expectedTime,
    AX_ATTEMPT: String(item.attempt),
    AX_RUN_NO: String(item.runNo),
    AX_TRACE_ID: item.traceId,
    AX_IDEMPOTENCY_KEY: item.idempotencyKey,
    AX_PARAMS: JSON.stringify(item.params),
  });
  if (item.shardIndex !== undefined && item.shardTotal !== undefined) {
    env.AX_SHARD_INDEX = String(item.shardIndex);
    env.AX_SHARD_TOTAL = String(item.shardTotal);
  }
  Object.assign(env, taskEnv);
  if (traceparent !== null) env.TRACEPARENT = traceparent;
  return env;
}

/** Creates the shell executor. */
export function createShellExecutor(options: ShellExecutorOptions): Executor {
  const killGraceMs = options.killGraceMs ?? 5_000;
  const source = options.env ?? process.env;

  const runIn = async (request: ExecutionRequest, workspace: JobWorkspace | undefined): Promise<ExecutionOutcome> => {
    const { item } = request;
    let exec: ShellExec;
    let env: Record<string, string>;
    let mask: SecretMask = NO_SECRETS;
    try {
      exec = expandExecTemplates(item.exec, { bizDate: item.bizDate, expectedTime: item.expectedTime, params: item.params }) as ShellExec;
      let taskEnv = (exec.env ?? {}) as Record<string, string>;
      // No secretRef, no filesystem access (and no await).
      if (hasSecretRef(exec.env)) {
        const resolved = await resolveSecretables(exec.env ?? {}, { dir: options.secretsDir, team: item.team });
        taskEnv = resolved.values;
        mask = secretMask(resolved.secrets);
      }
      env = jobEnv(item, taskEnv, source, workspace, jobTraceparent(request));
      request.output?.useMask(mask);
    } catch (error) {
      const message = error instanceof SecretMissingError ? error.message : `cannot prepare the command: ${(error as Error).message}`;
      return { outcome: 'FAILED', exitCode: null, error: message };
    }
    const argv = exec.shell ? ['/bin/sh', '-c', exec.command.join(' ')] : exec.command; // join: see the file comment
    const cwd = exec.cwd ?? workspace?.dir;
    return runProcessJob(request, { argv, env, cwd, mask, identity: workspace?.identity }, { outputTailBytes: options.outputTailBytes, killGraceMs });
  };

  return {
    async run(request: ExecutionRequest): Promise<ExecutionOutcome> {
      const { item } = request;
      if (item.exec.type !== 'shell') throw new Error(`shell executor got a ${item.exec.type} exec`);
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
