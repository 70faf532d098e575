/**
 * A hand-written accept path for the hot message kinds (`dispatch`, `result`, `ack`,
 * `refusal`): zod plus the path-building structure walk cost ~15-20 µs per dispatch item, more
 * than the rest of a worker's handling. `fastAcceptMessage` returns exactly what the kind's zod
 * schema would output (same keys in the same order, absent optionals absent, defaults applied,
 * unknown keys dropped) when it is sure zod accepts the body, and `undefined` otherwise; zod
 * stays the only authority for rejections and their reasons (`codec.ts` falls back to it).
 *
 * It mirrors `dispatch.ts`, `worker-replies.ts`, `envelope.ts` and `exec-schema.ts`: a change to
 * one of those schemas must be made here too. The tests compare this path with zod on valid
 * messages and on thousands of mutated ones (`fast-accept.test.ts`, `fast-accept.fuzz.test.ts`).
 *
 * The body's structure (no `__proto__` keys, bounded depth) must be checked before calling.
 */
import type { DispatchItem, DispatchMessage } from './dispatch.js';
import { MAX_ITEMS_PER_MESSAGE, MESSAGE_VERSION, OUTPUT_TAIL_MAX_BYTES } from './envelope.js';
import { DEFAULT_TEAM, TEAM_NAME_PATTERN } from '../task/definition.js';
import { acceptExec } from './fast-exec.js';
import { isBizDate, isId, isInstant, isIntIn, isNonEmptyString, isObject, isOneOf, isOptionalBoolean, isStringUpTo } from './fast-fields.js';
import { base64Bytes, BASE64_PATTERN, LOG_STREAMS } from './log.js';
import type { AckItem, AckMessage, RefusalItem, RefusalMessage, ResultItem, ResultMessage, ResultOutput } from './worker-replies.js';
import {
  OUTPUT_IN_RESULT_MAX_BYTES,
  OUTPUT_IN_RESULT_MAX_CHUNKS,
  REFUSAL_DETAIL_MAX_LENGTH,
  REFUSAL_REASONS,
  RESULT_ERROR_MAX_LENGTH,
  RESULT_ORIGINS,
  RESULT_OUTCOMES,
} from './worker-replies.js';

/** The messages this path can accept. */
export type FastAcceptedMessage = DispatchMessage | ResultMessage | AckMessage | RefusalMessage;

/** A UTF-16 unit is at most 3 bytes of UTF-8, so a tail this short is within the byte limit uncounted. */
const OUTPUT_TAIL_SURE_LENGTH = Math.floor(OUTPUT_TAIL_MAX_BYTES / 3);

/**
 * The message zod would output for `body` of `kind`, or `undefined` when that is not certain
 * (an invalid body, another kind, or a value this path does not model).
 */
export function fastAcceptMessage(kind: string, body: Record<string, unknown>): FastAcceptedMessage | undefined {
  if (body.v !== MESSAGE_VERSION || !isId(body.workerId)) return undefined;
  switch (kind) {
    case 'dispatch':
      return acceptDispatch(body.workerId, body.items);
    case 'result':
      return acceptResult(body.workerId, body.origin, body.items);
    case 'ack':
      return acceptAck(body.workerId, body.items);
    case 'refusal':
      return acceptRefusal(body.workerId, body.items);
    default:
      return undefined;
  }
}

function acceptDispatch(workerId: string, rawItems: unknown): DispatchMessage | undefined {
  const items = acceptBatch(rawItems, acceptDispatchItem);
  return items === undefined ? undefined : { v: MESSAGE_VERSION, kind: 'dispatch', workerId, items };
}

function acceptResult(workerId: string, origin: unknown, rawItems: unknown): ResultMessage | undefined {
  if (origin !== undefined && !isOneOf(RESULT_ORIGINS, origin)) return undefined;
  const items = acceptBatch(rawItems, acceptResultItem);
  if (items === undefined) return undefined;
  return origin === undefined ? { v: MESSAGE_VERSION, kind: 'result', workerId, items } : { v: MESSAGE_VERSION, kind: 'result', workerId, origin, items };
}

function acceptAck(workerId: string, rawItems: unknown): AckMessage | undefined {
  const items = acceptBatch(rawItems, acceptAckItem);
  return items === undefined ? undefined : { v: MESSAGE_VERSION, kind: 'ack', workerId, items };
}

function acceptRefusal(workerId: string, rawItems: unknown): RefusalMessage | undefined {
  const items = acceptBatch(rawItems, acceptRefusalItem);
  return items === undefined ? undefined : { v: MESSAGE_VERSION, kind: 'refusal', workerId, items };
}

/** `batchOf(item)`: 1 to `MAX_ITEMS_PER_MESSAGE` items, every one accepted. */
function acceptBatch<T>(value: unknown, acceptItem: (item: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ITEMS_PER_MESSAGE) return undefined;
  const out = new Array<T>(value.length);
  for (let i = 0; i < value.length; i++) {
    const item = acceptItem(value[i]);
    if (item === undefined) return undefined;
    out[i] = item;
  }
  return out;
}

function acceptDispatchItem(value: unknown): DispatchItem | undefined {
  if (!isObject(value)) return undefined;
  const i = value;
  if (
    !isId(i.executionId) ||
    !isId(i.instanceId) ||
    !isNonEmptyString(i.taskName) ||
    !isId(i.taskId) ||
    !isInstant(i.expectedTime) ||
    !isBizDate(i.bizDate) ||
    !isIntIn(i.attempt, 1) ||
    !isIntIn(i.maxAttempts, 1) ||
    !isIntIn(i.runNo, 1) ||
    !isIntIn(i.priority, 0, 9) ||
    !isObject(i.params) ||
    !isIntIn(i.timeoutSeconds, 1) ||
    !isInstant(i.ackDeadline) ||
    !isNonEmptyString(i.traceId) ||
    !isNonEmptyString(i.idempotencyKey)
  ) {
    return undefined;
  }
  const exec = acceptExec(i.exec);
  if (exec === undefined) return undefined;
  // team and keyVersion have defaults (items of a broker from before teams)
  const team = i.team === undefined ? DEFAULT_TEAM : i.team;
  const keyVersion = i.keyVersion === undefined ? 1 : i.keyVersion;
  if (typeof team !== 'string' || !TEAM_NAME_PATTERN.test(team) || !isIntIn(keyVersion, 1)) return undefined;
  if (i.previousKeyValidUntil !== undefined && !isInstant(i.previousKeyValidUntil)) return undefined;
  const httpAllow = i.httpAllow;
  if (httpAllow !== undefined && !(Array.isArray(httpAllow) && httpAllow.length <= 1_000 && httpAllow.every((e) => typeof e === 'string' && e.length >= 1 && e.length <= 300))) return undefined;
  // The schema's refinement: both shard fields or neither, and index < total.
  const { shardIndex, shardTotal } = i;
  const sharded = shardIndex !== undefined || shardTotal !== undefined;
  if (sharded && !(isIntIn(shardIndex, 0) && isIntIn(shardTotal, 1) && shardIndex < shardTotal)) return undefined;
  // `params` is reused: zod copies a record key by key, and the parsed JSON object is fresh.
  const out: Record<string, unknown> = {
    executionId: i.executionId,
    instanceId: i.instanceId,
    taskName: i.taskName,
    taskId: i.taskId,
    team,
    keyVersion,
  };
  if (httpAllow !== undefined) out.httpAllow = [...(httpAllow as string[])];
  if (i.previousKeyValidUntil !== undefined) out.previousKeyValidUntil = i.previousKeyValidUntil;
  Object.assign(out, {
    expectedTime: i.expectedTime,
    bizDate: i.bizDate,
    attempt: i.attempt,
    maxAttempts: i.maxAttempts,
    runNo: i.runNo,
    priority: i.priority,
    params: i.params,
    exec,
    timeoutSeconds: i.timeoutSeconds,
    ackDeadline: i.ackDeadline,
    traceId: i.traceId,
  });
  if (i.traceparent !== undefined) {
    if (!isNonEmptyString(i.traceparent) || i.traceparent.length > 512) return undefined;
    out.traceparent = i.traceparent;
  }
  if (sharded) {
    out.shardIndex = shardIndex;
    out.shardTotal = shardTotal;
  }
  out.idempotencyKey = i.idempotencyKey;
  if (i.outputInResult !== undefined) {
    if (typeof i.outputInResult !== 'boolean') return undefined;
    out.outputInResult = i.outputInResult;
  }
  return out as DispatchItem;
}

/**
 * The result item zod would output for `value`, or `undefined` when that is not certain: the
 * worker checks each item it builds with this first (`resultItemSchema` decides the rest).
 * Like the message path, it does not walk `data` for structure.
 */
export function acceptResultItem(value: unknown): ResultItem | undefined {
  if (!isObject(value)) return undefined;
  const { executionId, instanceId, outcome, exitCode, outputTail, outputTruncated, error, data, startedAt, endedAt, async, printedNothing, output } = value;
  if (
    !isId(executionId) ||
    !isId(instanceId) ||
    !isOneOf(RESULT_OUTCOMES, outcome) ||
    (exitCode !== undefined && exitCode !== null && !isIntIn(exitCode, Number.MIN_SAFE_INTEGER)) ||
    (outputTail !== undefined && !isOutputTail(outputTail)) ||
    !isOptionalBoolean(outputTruncated) ||
    (error !== undefined && !isStringUpTo(error, RESULT_ERROR_MAX_LENGTH)) ||
    (data !== undefined && !isObject(data)) ||
    (startedAt !== undefined && !isInstant(startedAt)) ||
    !isInstant(endedAt) ||
    !isOptionalBoolean(async) ||
    !isOptionalBoolean(printedNothing) ||
    (async === true && outcome !== 'SUCCESS') // the schema's refinement
  ) {
    return undefined;
  }
  // Assigned in the schema's key order, optionals only when present (as zod does).
  const out: Record<string, unknown> = { executionId, instanceId, outcome };
  if (exitCode !== undefined) out.exitCode = exitCode;
  if (outputTail !== undefined) out.outputTail = outputTail;
  if (outputTruncated !== undefined) out.outputTruncated = outputTruncated;
  if (error !== undefined) out.error = error;
  if (data !== undefined) out.data = data;
  if (startedAt !== undefined) out.startedAt = startedAt;
  out.endedAt = endedAt;
  if (async !== undefined) out.async = async;
  if (printedNothing !== undefined) out.printedNothing = printedNothing;
  if (output !== undefined) {
    const accepted = acceptResultOutput(output);
    if (accepted === undefined) return undefined;
    out.output = accepted;
  }
  return out as ResultItem;
}

/**
 * `resultOutputSchema`'s output for `value` (keys in the schema's order), or `undefined` when
 * that is not certain; a value with a key zod would drop is left to zod.
 */
function acceptResultOutput(value: unknown): ResultOutput | undefined {
  if (!isObject(value) || !hasOnlyKeys(value, OUTPUT_KEYS)) return undefined;
  const { chunks, stdoutBytes, stderrBytes, truncated } = value;
  if (!Array.isArray(chunks) || chunks.length > OUTPUT_IN_RESULT_MAX_CHUNKS || !isIntIn(stdoutBytes, 0) || !isIntIn(stderrBytes, 0) || typeof truncated !== 'boolean') {
    return undefined;
  }
  let bytes = 0;
  const out = new Array<ResultOutput['chunks'][number]>(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    const chunk: unknown = chunks[i];
    if (!isObject(chunk) || !hasOnlyKeys(chunk, OUTPUT_CHUNK_KEYS)) return undefined;
    const { stream, offset, allOffset, data } = chunk;
    if (!isOneOf(LOG_STREAMS, stream) || !isIntIn(offset, 0) || !isIntIn(allOffset, 0)) return undefined;
    if (!isStringUpTo(data, OUTPUT_CHUNK_DATA_MAX_LENGTH, 1) || !BASE64_PATTERN.test(data)) return undefined;
    bytes += base64Bytes(data);
    out[i] = { stream, offset, allOffset, data };
  }
  return bytes <= OUTPUT_IN_RESULT_MAX_BYTES ? { chunks: out, stdoutBytes, stderrBytes, truncated } : undefined;
}

const OUTPUT_KEYS: ReadonlySet<string> = new Set(['chunks', 'stdoutBytes', 'stderrBytes', 'truncated']);
const OUTPUT_CHUNK_KEYS: ReadonlySet<string> = new Set(['stream', 'offset', 'allOffset', 'data']);
/** `resultOutputChunkSchema`'s `data` bound, in characters (base64 is ASCII: units are code points). */
const OUTPUT_CHUNK_DATA_MAX_LENGTH = Math.ceil(OUTPUT_IN_RESULT_MAX_BYTES / 3) * 4;

function hasOnlyKeys(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

/** `outputTail`: a string of at most `OUTPUT_TAIL_MAX_BYTES` bytes of UTF-8. */
function isOutputTail(value: unknown): value is string {
  return typeof value === 'string' && (value.length <= OUTPUT_TAIL_SURE_LENGTH || Buffer.byteLength(value, 'utf8') <= OUTPUT_TAIL_MAX_BYTES);
}

function acceptAckItem(value: unknown): AckItem | undefined {
  if (!isObject(value)) return undefined;
  const { executionId, instanceId, at } = value;
  if (!isId(executionId) || !isId(instanceId) || !isInstant(at)) return undefined;
  return { executionId, instanceId, at };
}

function acceptRefusalItem(value: unknown): RefusalItem | undefined {
  if (!isObject(value)) return undefined;
  const { executionId, instanceId, reason, at, detail } = value;
  if (
    !isId(executionId) ||
    !isId(instanceId) ||
    !isOneOf(REFUSAL_REASONS, reason) ||
    (at !== undefined && !isInstant(at)) ||
    (detail !== undefined && !isStringUpTo(detail, REFUSAL_DETAIL_MAX_LENGTH))
  ) {
    return undefined;
  }
  const out: Record<string, unknown> = { executionId, instanceId, reason };
  if (at !== undefined) out.at = at;
  if (detail !== undefined) out.detail = detail;
  return out as RefusalItem;
}
