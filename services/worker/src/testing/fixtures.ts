/** Builders shared by the worker's tests (not exported by the service). */
import { idempotencyKeyOf, type DispatchItem } from '@ax/core';

let counter = 0;

/** A valid dispatch item; `ackDeadline` 60 s from now unless overridden. */
export function dispatchItem(overrides: Partial<DispatchItem> = {}): DispatchItem {
  counter += 1;
  const expectedTime = '2026-12-01T02:00:00.000Z';
  const taskName = overrides.taskName ?? 'job';
  return {
    executionId: `exec-${process.pid}-${Date.now()}-${counter}`,
    instanceId: String(1000 + counter),
    taskName,
    taskId: '7',
    team: 'default',
    keyVersion: 1,
    expectedTime,
    bizDate: '2026-12-01',
    attempt: 1,
    maxAttempts: 1,
    runNo: 1,
    priority: 5,
    params: {},
    exec: { type: 'shell', command: ['true'], shell: false },
    timeoutSeconds: 30,
    ackDeadline: new Date(Date.now() + 60_000).toISOString(),
    traceId: `trace-${counter}`,
    idempotencyKey: idempotencyKeyOf(taskName, expectedTime, 1),
    ...overrides,
  };
}
