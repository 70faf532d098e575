/** Slot keys shared by the sink and the checks: `<taskName>:<expectedTime ISO>:<runNo>`. */

/** The idempotency key of one run of a slot (R18). */
export function slotKey(taskName, expectedMs, runNo = 1) {
  return `${taskName}:${new Date(expectedMs).toISOString()}:${runNo}`;
}

/** `{ taskName, expectedMs, runNo }` of a key, or null when it is not one. */
export function parseIdempotencyKey(key) {
  const first = key.indexOf(':');
  const last = key.lastIndexOf(':');
  if (first <= 0 || last <= first) return null;
  const expectedMs = Date.parse(key.slice(first + 1, last));
  const runNo = Number(key.slice(last + 1));
  if (!Number.isFinite(expectedMs) || !Number.isInteger(runNo)) return null;
  return { taskName: key.slice(0, first), expectedMs, runNo };
}
