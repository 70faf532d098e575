/**
 * The `plugin` executor (§5): each run is a forked `plugin-runner` in its own process group,
 * recorded before it starts (R13); at the deadline or on a cancel the group gets SIGTERM, a
 * grace, then SIGKILL — a hanging plugin cannot hold a slot past its timeout.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expandExecTemplates, type PluginExec } from '@ax/core';
import { OutputTail } from '../executors/output-tail.js';
import { stoppedOutcome, type ExecutionOutcome, type ExecutionRequest, type Executor } from '../executors/types.js';
import { recordGroupAndArm } from '../executors/spawn-gate.js';
import { terminateGroup } from '../process-group.js';
import type { RunnerResult, RunnerStart } from './plugin-api.js';
import type { PluginSet } from './plugin-registry.js';

/** Options of the plugin executor. */
export interface PluginExecutorOptions {
  readonly plugins: PluginSet;
  readonly outputTailBytes: number;
  /** Time between SIGTERM and SIGKILL; default 5000 ms. */
  readonly killGraceMs?: number;
  /** The compiled runner; default `plugin-runner.js` next to this module. */
  readonly runnerPath?: string;
}

/** The runner next to this module (in `dist/`). */
export function defaultRunnerPath(): string {
  return fileURLToPath(new URL('./plugin-runner.js', import.meta.url));
}

/** Creates the plugin executor. */
export function createPluginExecutor(options: PluginExecutorOptions): Executor {
  const killGraceMs = options.killGraceMs ?? 5_000;
  const runnerPath = options.runnerPath ?? defaultRunnerPath();

  return {
    async run(request: ExecutionRequest): Promise<ExecutionOutcome> {
      const { item } = request;
      const raw = item.exec;
      if (raw.type !== 'plugin') throw new Error(`plugin executor got a ${raw.type} exec`);
      const plugin = options.plugins.plugins.get(raw.name);
      if (plugin === undefined) {
        const broken = options.plugins.broken.find((b) => b.name === raw.name);
        return {
          outcome: 'FAILED',
          exitCode: null,
          error: broken ? `plugin ${broken.name} failed to load on this worker: ${broken.error}` : `no plugin named ${raw.name} on this worker`,
        };
      }
      if (!existsSync(runnerPath)) return { outcome: 'FAILED', exitCode: null, error: `plugin runner missing at ${runnerPath} (build the worker)` };
      let exec: PluginExec;
      try {
        exec = expandExecTemplates(raw, { bizDate: item.bizDate, expectedTime: item.expectedTime, params: item.params }) as PluginExec;
      } catch (error) {
        return { outcome: 'FAILED', exitCode: null, error: `cannot prepare the plugin config: ${(error as Error).message}` };
      }
      const tail = new OutputTail(options.outputTailBytes);
      const start: RunnerStart = {
        type: 'start',
        file: plugin.file,
        context: {
          config: exec.config,
          params: item.params,
          executionId: item.executionId,
          instanceId: item.instanceId,
          taskName: item.taskName,
          bizDate: item.bizDate,
          expectedTime: item.expectedTime,
          attempt: item.attempt,
          idempotencyKey: item.idempotencyKey,
          traceId: item.traceId,
          deadline: new Date(request.deadlineMs).toISOString(),
        },
      };

      return new Promise<ExecutionOutcome>((resolve) => {
        let settled = false;
        let timedOut = false;
        let stopReason: unknown;
        let killing: Promise<void> | undefined;
        let result: RunnerResult | undefined;
        let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
        const child = fork(runnerPath, [], {
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
          execArgv: [],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: process.env.NODE_ENV ?? '' },
        });
        const pgid = child.pid;
        const finish = (outcome: ExecutionOutcome): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          request.signal.removeEventListener('abort', onAbort);
          resolve({ ...outcome, outputTail: tail.text(), outputTruncated: tail.truncated });
        };
        const kill = (): void => {
          if (child.connected) child.send({ type: 'stop' }, () => undefined);
          if (pgid !== undefined && killing === undefined) killing = terminateGroup(pgid, killGraceMs);
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
          Math.max(0, request.deadlineMs - Date.now()),
        );
        // `ctx.log` writes stdout, `ctx.error` stderr (plugin-runner.ts); the log keeps them apart.
        const output = request.output;
        child.stdout?.on('data', (chunk: Buffer) => {
          tail.push(chunk);
          output?.write('stdout', chunk);
        });
        child.stderr?.on('data', (chunk: Buffer) => {
          tail.push(chunk);
          output?.write('stderr', chunk);
        });
        child.on('message', (message: RunnerResult) => {
          if (message.type === 'result') result = message;
        });
        child.on('error', (error) => finish({ outcome: 'FAILED', exitCode: null, error: `cannot start the plugin runner: ${error.message}` }));
        child.on('exit', (code, signal) => {
          exitInfo = { code, signal };
        });
        child.on('close', () => {
          void (async () => {
            if (killing !== undefined) await killing;
            const info = exitInfo ?? { code: null, signal: null };
            if (timedOut) finish({ outcome: 'TIMEOUT', exitCode: info.code, error: `plugin ${plugin.name} timed out after ${item.timeoutSeconds} s; killed` });
            else if (stopReason !== undefined) finish({ ...stoppedOutcome(stopReason), exitCode: info.code });
            else if (result === undefined) finish({ outcome: 'FAILED', exitCode: info.code, error: `plugin runner ended without a result (code ${info.code}, signal ${info.signal})` });
            else if (result.success) finish({ outcome: 'SUCCESS', exitCode: 0, data: result.data });
            else finish({ outcome: 'FAILED', exitCode: info.code, data: result.data, error: result.message ?? `plugin ${plugin.name} reported a failure` });
          })();
        });
        if (pgid === undefined) return;
        if (!recordGroupAndArm(pgid, request, onAbort, finish)) return;
        child.send(start);
      });
    },
  };
}
