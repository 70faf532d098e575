/**
 * The course of one drill: start its world, let the load flow, open the window, cause the fault
 * (the drill's own code, which must prove the fault happened), wait for recovery, close the
 * window, let it drain, then compute lost / doubled / recovery from the sink and the instance rows.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { expect } from 'vitest';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NOMINAL_CALLS_PER_SECOND, PERIOD_MS, sleep, startStack, type Load, type Stack, type Topology, type WorkerExtraEnv } from './stack.js';
import { computeDrillStats, type DrillRow, type DrillStats } from './stats.js';

/** Recovery goal of every drill, s; the assertions use 5× this. */
export const GOAL_S = 30;
export const CEILING_S = GOAL_S * 5;
/** Goal for a lost worker's jobs to run elsewhere, s (#23: RabbitMQ sees the connection drop); asserted at 5×. */
export const LOST_WORKER_GOAL_S = 10;
export const LOST_WORKER_CEILING_S = LOST_WORKER_GOAL_S * 5;
/** Steady load inside the window before the fault, and after the recovery (the window closes 4 s before its end). */
const STEADY_MS = 4_000;
const STEADY_AFTER_MS = 10_000;
/** A slot is given this long after its due time before the window closes over it. */
const CLOSE_MARGIN_MS = 4_000;
/** After the window is drained: time for late calls (a thawed worker) to reach the sink. */
const SETTLE_MS = 3_000;

export const ARTIFACTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');

/** What a fault reports. */
export interface FaultReport {
  /** The instant recovery is measured from. */
  readonly recoveryFromMs: number;
  /** What "from" means, for the table: "kill", "RabbitMQ back" … */
  readonly from: string;
  /** Facts proving the fault happened, printed with the verdict. */
  readonly evidence: readonly string[];
}

/** One drill. */
export interface DrillSpec {
  readonly title: string;
  readonly topology?: Topology;
  readonly workerExtraEnv?: WorkerExtraEnv;
  /** Load on top of the 200 `http` tasks (`shell` tasks). */
  readonly load?: Load;
  /** What the goal is, for the table. */
  readonly goal: string;
  /** Causes the fault; throws when it could not be caused (the drill then fails). */
  fault(stack: Stack, log: (line: string) => void): Promise<FaultReport>;
  /** Drill-specific checks after the verdict (e.g. the late results were fenced). */
  verify?(stack: Stack, ctx: { stats: DrillStats; fault: FaultReport; fromMs: number; toMs: number; log: (line: string) => void }): Promise<void>;
}

/** The outcome of one drill. */
export interface DrillResult {
  readonly row: DrillRow;
  readonly stats: DrillStats;
  readonly fault: FaultReport;
  readonly details: string;
}

/**
 * The verdict every drill asserts: its window held slots, none was lost or run twice, and calls
 * resumed and the backlog was gone within `CEILING_S` of the reference instant.
 */
export function expectDrillVerdict(result: DrillResult): void {
  const { stats, details } = result;
  expect(stats.expectedSlots, 'the window holds slots').toBeGreaterThan(0);
  expect(stats.lost, `lost slots\n${details}`).toEqual([]);
  expect(stats.doubled, `doubled slots\n${details}`).toEqual([]);
  expect(stats.callsResumeS, `calls resume within ${CEILING_S} s\n${details}`).not.toBeNull();
  expect(stats.callsResumeS as number).toBeLessThanOrEqual(CEILING_S);
  expect(stats.backlogGoneS, `backlog gone within ${CEILING_S} s\n${details}`).not.toBeNull();
  expect(stats.backlogGoneS as number).toBeLessThanOrEqual(CEILING_S);
}

/** Appends a line to the drill log (artifacts/drills.log) and prints it. */
export function drillLog(title: string): (line: string) => void {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return (line: string) => {
    const text = `[${new Date().toISOString()}] ${title}: ${line}`;
    console.log(text);
    appendFileSync(path.join(ARTIFACTS_DIR, 'drills.log'), `${text}\n`);
  };
}

/** Polls `check` until it is true (→ true) or `timeoutMs` passed (→ false); errors count as "not yet". */
async function waitUntil(timeoutMs: number, intervalMs: number, check: () => Promise<boolean> | boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return true;
    } catch {
      // a server of the drill may be down: try again
    }
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

/**
 * Runs the drill in its own world and returns its row; the caller asserts. Everything it
 * started is stopped and removed before it returns or throws.
 */
export async function runDrill(spec: DrillSpec): Promise<DrillResult> {
  const log = drillLog(spec.title);
  const t0 = Date.now();
  const stack = await startStack(spec.topology, spec.workerExtraEnv, spec.load);
  try {
    log(`world ready in ${Date.now() - t0} ms (namespace ${stack.namespace}, MariaDB :${stack.mariadb.port}, Redis :${stack.redis.port}, RabbitMQ :${stack.rabbit.port}, sink ${stack.sink.url})`);
    const flowing = await waitUntil(90_000, 250, () => stack.sink.countBetween(Date.now() - 1_000, Date.now()) >= NOMINAL_CALLS_PER_SECOND / 2);
    if (!flowing) throw new Error(`the load never flowed (${stack.sink.calls.length} calls in 90 s)\n${stack.dumpOutput()}`);
    const fromMs = Math.ceil((Date.now() + 1_000) / PERIOD_MS) * PERIOD_MS;
    await sleep(fromMs + STEADY_MS - Date.now());
    log(`window opened at ${new Date(fromMs).toISOString()}; causing the fault`);

    const fault = await spec.fault(stack, log);
    for (const line of fault.evidence) log(`evidence: ${line}`);

    // Recovery: every slot due by the reference instant reaches SUCCESS (bounded by the ceiling).
    const dueBy = Math.floor(fault.recoveryFromMs / PERIOD_MS) * PERIOD_MS + 1;
    const expectedBy = stack.taskNames.length * Math.max(0, Math.ceil((dueBy - fromMs) / PERIOD_MS));
    const recovered = await waitUntil(CEILING_S * 1000 + 10_000 - (Date.now() - fault.recoveryFromMs), 500, async () => (await stack.succeeded(fromMs, dueBy)) >= expectedBy);
    log(recovered ? `backlog due by the reference instant is done` : `backlog NOT done within ${CEILING_S + 10} s`);
    await sleep(STEADY_AFTER_MS);
    const toMs = Math.floor((Date.now() - CLOSE_MARGIN_MS) / PERIOD_MS) * PERIOD_MS;

    // Close: no more slots, drain what the window holds, give late calls a moment.
    await Promise.all(stack.schedulers.map((s) => s.stop({ graceMs: 5_000 })));
    const expected = stack.taskNames.length * Math.ceil((toMs - fromMs) / PERIOD_MS);
    const drained = await waitUntil(60_000, 500, async () => (await stack.succeeded(fromMs, toMs)) >= expected);
    if (!drained) log(`window not drained within 60 s`);
    await sleep(SETTLE_MS);

    const instances = await stack.instances(fromMs, toMs);
    const stats = computeDrillStats({
      taskNames: stack.taskNames,
      periodMs: PERIOD_MS,
      fromMs,
      toMs,
      instances,
      calls: [...stack.sink.calls],
      recoveryFromMs: fault.recoveryFromMs,
      nominalCallsPerSecond: NOMINAL_CALLS_PER_SECOND,
    });
    const doubledSlots = new Set(stats.doubled.map((d) => `${d.taskName}@${d.expectedMs}`)).size;
    const row: DrillRow = {
      drill: spec.title,
      lost: stats.lost.length,
      doubled: doubledSlots,
      callsResumeS: stats.callsResumeS,
      backlogGoneS: stats.backlogGoneS,
      goal: `${spec.goal}; from ${fault.from}`,
    };
    const details = [
      `window ${new Date(fromMs).toISOString()} .. ${new Date(toMs).toISOString()}: ${stats.expectedSlots} slots, ${stats.windowCalls} sink calls`,
      `lost ${stats.lost.length}, doubled ${doubledSlots} slots, calls resume ${stats.callsResumeS ?? 'never'} s, backlog gone ${stats.backlogGoneS ?? 'never'} s (${spec.goal})`,
      ...stats.lost.slice(0, 10).map((l) => `  lost ${l.taskName} ${new Date(l.expectedMs).toISOString()} state ${l.state} instance ${l.instanceId ?? '-'}`),
      ...stats.doubled.slice(0, 10).map((d) => `  doubled ${d.taskName} ${new Date(d.expectedMs).toISOString()} ${d.kind}: ${d.detail}; executions ${d.executionIds.join(',')} workers ${d.workerIds.join(',')}`),
    ].join('\n');
    log(details);
    const errors = stack.errorSummary();
    if (errors.length > 0) log(`service errors logged during the drill:\n  ${errors.join('\n  ')}`);
    try {
      await spec.verify?.(stack, { stats, fault, fromMs, toMs, log });
    } catch (error) {
      // The verdict stands; the drill's own check failed: the row says so.
      const message = error instanceof Error ? error.message.split('\n', 1)[0] : String(error);
      throw Object.assign(error instanceof Error ? error : new Error(message), { drillRow: { ...row, goal: `${row.goal}; FAILED: ${message}` } });
    }
    if (stats.lost.length > 0 || stats.doubled.length > 0) {
      appendFileSync(path.join(ARTIFACTS_DIR, 'drills.log'), `${stack.dumpOutput()}\n`);
    }
    return { row, stats, fault, details };
  } catch (error) {
    appendFileSync(path.join(ARTIFACTS_DIR, 'drills.log'), `${spec.title} failed: ${String(error)}\n${stack.dumpOutput()}\n`);
    throw error;
  } finally {
    const c0 = Date.now();
    await stack.cleanup();
    log(`cleaned up in ${Date.now() - c0} ms; drill took ${Math.round((Date.now() - t0) / 1000)} s`);
  }
}
