/**
 * The verdict of one fault drill, computed from what the sink saw and what ax recorded (pure:
 * no I/O, no clock). Every time is epoch ms on the one machine the drill runs on (the sink, the
 * private MariaDB and the services share its clock; a faketime worker's own clock is never used).
 *
 * - **lost**: a slot due in the window (every task × every period boundary in `[fromMs, toMs)`)
 *   whose instance never reached `SUCCESS`, or that has no instance at all;
 * - **doubled**: a slot the sink saw called again after ax had recorded its `SUCCESS` (a call
 *   received after the instance's `ended_at`), or called by two executions whose calls
 *   overlapped in time, or called twice by the same execution (R12 forbids running a
 *   redelivered dispatch again);
 * - **calls resume**: seconds from the reference instant until the sink again receives calls
 *   at half the nominal rate within one second;
 * - **backlog gone**: seconds from the reference instant until every window slot due at or
 *   before it has reached `SUCCESS` (0 if that happened before the reference instant).
 */

/** One call the sink received. */
export interface SinkCall {
  readonly taskName: string;
  /** The slot's `expectedTime`, epoch ms. */
  readonly expectedMs: number;
  readonly executionId: string;
  readonly instanceId: string;
  /** `X-Ax-Worker`. */
  readonly workerId: string;
  readonly attempt: number;
  readonly receivedMs: number;
  /** When the sink answered, or the caller went away; `null` while still open. */
  readonly endedMs: number | null;
}

/** The instance row of a slot, as ax recorded it. */
export interface SlotInstance {
  readonly instanceId: string;
  readonly taskName: string;
  readonly expectedMs: number;
  readonly state: string;
  /** `ended_at` of a final instance (the moment the broker applied its result). */
  readonly endedMs: number | null;
}

/** A slot: task and expected time. */
export interface SlotRef {
  readonly taskName: string;
  readonly expectedMs: number;
}

/** A lost slot and what ax says about it. */
export interface LostSlot extends SlotRef {
  /** The instance's state, or `MISSING` when no instance exists. */
  readonly state: string;
  readonly instanceId: string | null;
}

/** A doubled slot. */
export interface DoubledSlot extends SlotRef {
  readonly kind: 'after-success' | 'overlap' | 'same-execution-twice';
  readonly executionIds: readonly string[];
  readonly workerIds: readonly string[];
  readonly detail: string;
}

/** Input of {@link computeDrillStats}. */
export interface DrillInput {
  readonly taskNames: readonly string[];
  /** Slot period (cron every N seconds), ms. */
  readonly periodMs: number;
  /** Window of due slots, `[fromMs, toMs)`. */
  readonly fromMs: number;
  readonly toMs: number;
  readonly instances: readonly SlotInstance[];
  readonly calls: readonly SinkCall[];
  /** The instant recovery is measured from (end of the fault, or the fault itself when instantaneous). */
  readonly recoveryFromMs: number;
  /** Calls per second of the load (tasks / period); "flowing" = half of it within one second. */
  readonly nominalCallsPerSecond: number;
}

/** The verdict. */
export interface DrillStats {
  readonly expectedSlots: number;
  readonly lost: readonly LostSlot[];
  readonly doubled: readonly DoubledSlot[];
  /** Seconds, or `null` when calls never flowed again. */
  readonly callsResumeS: number | null;
  /** Seconds, or `null` when some slot due by then never succeeded. */
  readonly backlogGoneS: number | null;
  /** Sink calls of window slots. */
  readonly windowCalls: number;
}

const slotKey = (taskName: string, expectedMs: number): string => `${taskName}@${expectedMs}`;

/** Every slot due in `[fromMs, toMs)`: period boundaries (epoch-aligned, like a cron every N s). */
export function expectedSlots(taskNames: readonly string[], periodMs: number, fromMs: number, toMs: number): SlotRef[] {
  const slots: SlotRef[] = [];
  const first = Math.ceil(fromMs / periodMs) * periodMs;
  for (const taskName of taskNames) {
    for (let t = first; t < toMs; t += periodMs) slots.push({ taskName, expectedMs: t });
  }
  return slots;
}

/** The first instant ≥ `fromMs` at which `threshold` calls arrive within the following second. */
export function callsResumeMs(receivedMs: readonly number[], fromMs: number, threshold: number): number | null {
  const times = receivedMs.filter((t) => t >= fromMs).sort((a, b) => a - b);
  let j = 0;
  for (let i = 0; i < times.length; i++) {
    const start = times[i] as number;
    if (j < i) j = i;
    while (j < times.length && (times[j] as number) < start + 1_000) j++;
    if (j - i >= threshold) return start;
  }
  return null;
}

function doubledOf(slot: SlotRef, calls: readonly SinkCall[], successMs: number | null): DoubledSlot[] {
  const found: DoubledSlot[] = [];
  const sorted = [...calls].sort((a, b) => a.receivedMs - b.receivedMs);
  const base = (kind: DoubledSlot['kind'], cs: readonly SinkCall[], detail: string): DoubledSlot => ({
    ...slot,
    kind,
    executionIds: cs.map((c) => c.executionId),
    workerIds: cs.map((c) => c.workerId),
    detail,
  });
  if (successMs !== null) {
    const late = sorted.filter((c) => c.receivedMs > successMs);
    if (late.length > 0) {
      found.push(base('after-success', late, `called ${late.length}× after SUCCESS was recorded at ${new Date(successMs).toISOString()}`));
    }
  }
  for (let i = 0; i < sorted.length; i++) {
    for (let k = i + 1; k < sorted.length; k++) {
      const a = sorted[i] as SinkCall;
      const b = sorted[k] as SinkCall;
      if (a.executionId === b.executionId) {
        found.push(base('same-execution-twice', [a, b], `execution ${a.executionId} called twice`));
        continue;
      }
      const aEnd = a.endedMs ?? Number.POSITIVE_INFINITY;
      if (b.receivedMs < aEnd) {
        found.push(base('overlap', [a, b], `executions overlapped: [${a.receivedMs}, ${a.endedMs}] and [${b.receivedMs}, ${b.endedMs}]`));
      }
    }
  }
  return found;
}

/** Computes lost, doubled and the recovery times of one drill. */
export function computeDrillStats(input: DrillInput): DrillStats {
  const slots = expectedSlots(input.taskNames, input.periodMs, input.fromMs, input.toMs);
  const instances = new Map<string, SlotInstance>();
  for (const row of input.instances) instances.set(slotKey(row.taskName, row.expectedMs), row);
  const callsBySlot = new Map<string, SinkCall[]>();
  for (const call of input.calls) {
    const key = slotKey(call.taskName, call.expectedMs);
    const list = callsBySlot.get(key);
    if (list) list.push(call);
    else callsBySlot.set(key, [call]);
  }

  const lost: LostSlot[] = [];
  const doubled: DoubledSlot[] = [];
  let windowCalls = 0;
  let backlogGoneMs: number | null = input.recoveryFromMs;
  for (const slot of slots) {
    const key = slotKey(slot.taskName, slot.expectedMs);
    const row = instances.get(key);
    const succeeded = row !== undefined && row.state === 'SUCCESS' && row.endedMs !== null;
    if (!succeeded) lost.push({ ...slot, state: row?.state ?? 'MISSING', instanceId: row?.instanceId ?? null });
    const calls = callsBySlot.get(key) ?? [];
    windowCalls += calls.length;
    doubled.push(...doubledOf(slot, calls, succeeded ? row.endedMs : null));
    if (slot.expectedMs <= input.recoveryFromMs && backlogGoneMs !== null) {
      backlogGoneMs = succeeded ? Math.max(backlogGoneMs, row.endedMs) : null;
    }
  }

  const resume = callsResumeMs(
    input.calls.map((c) => c.receivedMs),
    input.recoveryFromMs,
    Math.max(1, Math.floor(input.nominalCallsPerSecond / 2)),
  );
  return {
    expectedSlots: slots.length,
    lost,
    doubled,
    callsResumeS: resume === null ? null : round1((resume - input.recoveryFromMs) / 1000),
    backlogGoneS: backlogGoneMs === null ? null : round1((backlogGoneMs - input.recoveryFromMs) / 1000),
    windowCalls,
  };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** One row of the drill table. */
export interface DrillRow {
  readonly drill: string;
  readonly lost: number | string;
  readonly doubled: number | string;
  readonly callsResumeS: number | null | string;
  readonly backlogGoneS: number | null | string;
  readonly goal: string;
}

/** The drill table as Markdown: `drill | lost | doubled | calls-resume s | backlog-gone s | goal`. */
export function drillTable(rows: readonly DrillRow[]): string {
  const cell = (v: number | null | string): string => (v === null ? 'never' : String(v));
  const lines = [
    '| drill | lost | doubled | calls-resume s | backlog-gone s | goal |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.drill} | ${cell(r.lost)} | ${cell(r.doubled)} | ${cell(r.callsResumeS)} | ${cell(r.backlogGoneS)} | ${r.goal} |`),
  ];
  return lines.join('\n');
}
