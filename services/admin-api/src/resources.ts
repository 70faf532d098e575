/** Resource shapes of the API (ADMIN-API.md): tasks, instances, executions, events. */
import { isFinal, redactTaskSecrets } from '@ax/core';
import { traceIdOf } from '@ax/kit';
import { runDurationMs, type EventRecord, type ExecutionRecord, type InstanceRecord, type InstanceWaiting, type RunTimes, type TaskRecord } from '@ax/store';
import type { Role } from './auth.js';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** The task resource: the definition plus `version`, `createdAt`, `updatedAt`, `nextFireTime`, `lastFireTime`. */
export function taskResource(task: TaskRecord, opts: { redact: boolean }): Record<string, unknown> {
  const resource = {
    ...task.definition,
    version: task.version,
    createdAt: task.createdAt.toISOString(),
    updatedAt: task.updatedAt.toISOString(),
    // A disabled task does not fire (the stored time is where scheduling resumes from).
    nextFireTime: task.definition.enabled ? iso(task.nextFireTime) : null,
    lastFireTime: iso(task.lastFireTime),
    skippedCount: task.skippedCount,
    coalescedCount: task.coalescedCount,
    pausedReason: task.pausedReason,
    calendarSkippedCount: task.calendarSkippedCount,
    managedBy: task.managedBy,
  };
  return opts.redact ? redactTaskSecrets(resource) : resource;
}

/** Viewers see stored header/env values redacted; operators and admins as stored. */
export function redactFor(role: Role | undefined): boolean {
  return role === undefined || role === 'viewer';
}

/**
 * The instance resource. Its times are those of its current execution (`run`, from
 * `currentRunTimes`; undefined: none yet): `startedAt` when that started running, `endedAt`
 * when it ended once the instance is final (else when the instance became final, e.g. canceled
 * before it ran), `durationMs` between the two. `waiting` (from `waitingOfInstances`; undefined:
 * none stored) is shown only while the instance is WAITING or PENDING.
 */
export function instanceResource(i: InstanceRecord, run: RunTimes | undefined, waiting?: InstanceWaiting): Record<string, unknown> {
  const startedAt = run?.startedAt ?? null;
  const endedAt = isFinal(i.state) ? (run?.endedAt ?? i.endedAt) : i.endedAt;
  return {
    id: i.id,
    taskName: i.taskName,
    expectedTime: i.expectedTime.toISOString(),
    bizDate: i.bizDate,
    trigger: i.trigger,
    runNo: i.runNo,
    state: i.state,
    reason: i.reason,
    attempt: i.attempt,
    maxAttempts: i.maxAttempts,
    priority: i.priority,
    params: i.params,
    workerId: i.workerId,
    currentExecutionId: i.currentExecutionId,
    createdAt: i.createdAt.toISOString(),
    startedAt: iso(startedAt),
    endedAt: iso(endedAt),
    durationMs: run === undefined || run.endedAt === null ? null : run.durationMs,
    rerunBatchId: i.rerunBatchId,
    taskVersion: i.taskVersion,
    traceId: traceIdOf(i.traceParent),
    team: i.team,
    waiting:
      waiting === undefined || (i.state !== 'WAITING' && i.state !== 'PENDING')
        ? null
        : { reason: waiting.reason, since: waiting.since.toISOString(), message: waiting.message },
  };
}

/** One execution (attempt) in an instance detail. */
export function executionResource(e: ExecutionRecord): Record<string, unknown> {
  return {
    executionId: e.executionId,
    attempt: e.attempt,
    runNo: e.runNo,
    shardIndex: e.shardIndex,
    shardTotal: e.shardTotal,
    workerId: e.workerId,
    state: e.state,
    reason: e.reason,
    dispatchedAt: e.dispatchedAt.toISOString(),
    ackedAt: iso(e.ackedAt),
    // Started running: as the worker reported it, else (still running) at its ACK.
    startedAt: iso(e.startedAt ?? e.ackedAt),
    endedAt: iso(e.endedAt),
    durationMs: runDurationMs(e.startedAt ?? e.ackedAt, e.endedAt),
    exitCode: e.exitCode,
    outputTail: e.outputTail,
    outputTruncated: e.outputTruncated,
    error: e.error,
    result: e.result,
  };
}

/** An event (ADMIN-API.md "Shapes of events"): optional fields only when set. */
export function eventResource(e: EventRecord): Record<string, unknown> {
  return {
    type: e.type,
    at: e.at.toISOString(),
    ...(e.executionId === null ? {} : { executionId: e.executionId }),
    ...(e.workerId === null ? {} : { workerId: e.workerId }),
    ...(e.message === null ? {} : { message: e.message }),
    ...(e.data === null ? {} : { data: e.data }),
  };
}

/** JSON with object keys sorted (equality of definitions regardless of key order). */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
