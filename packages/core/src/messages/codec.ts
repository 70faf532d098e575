/**
 * The message catalog (CONVENTIONS habit 9) and its codec: `parseMessage` validates what a
 * consumer received and never throws; `encodeMessage` validates what a producer sends.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { convertZodIssue, describeValue } from '../task/issues.js';
import { isStructureSound, MAX_JSON_DEPTH, structureProblems } from '../task/json-guard.js';
import { cancelMessageSchema, heartbeatMessageSchema } from './control.js';
import { dispatchMessageSchema } from './dispatch.js';
import { MAX_MESSAGE_BYTES, MESSAGE_VERSION, SUPPORTED_MESSAGE_VERSIONS } from './envelope.js';
import { fastAcceptMessage } from './fast-accept.js';
import { logMessageSchema } from './log.js';
import { ackMessageSchema, refusalMessageSchema, resultMessageSchema } from './worker-replies.js';

/** Schema of each message kind. */
export const MESSAGE_SCHEMAS = {
  dispatch: dispatchMessageSchema,
  ack: ackMessageSchema,
  refusal: refusalMessageSchema,
  result: resultMessageSchema,
  heartbeat: heartbeatMessageSchema,
  cancel: cancelMessageSchema,
  log: logMessageSchema,
} as const;

/** A message kind. */
export type MessageKind = keyof typeof MESSAGE_SCHEMAS;

/** Every message kind. */
export const MESSAGE_KINDS = Object.keys(MESSAGE_SCHEMAS) as MessageKind[];

/** Any message of the catalog. */
export const messageSchema = z.discriminatedUnion('kind', [
  dispatchMessageSchema,
  ackMessageSchema,
  refusalMessageSchema,
  resultMessageSchema,
  heartbeatMessageSchema,
  cancelMessageSchema,
  logMessageSchema,
]);

/** Any message of the catalog. */
export type Message = z.output<typeof messageSchema>;
/** The message of one kind. */
export type MessageOf<K extends MessageKind> = Extract<Message, { kind: K }>;

/** The outcome of `parseMessage`. */
export type ParsedMessage = { ok: true; message: Message } | { ok: false; reason: string };

/** Issues quoted in a rejection reason before "and N more". */
const REASON_ISSUE_LIMIT = 5;

/** Depth allowed in a message: a task's params/config depth plus the envelope around them. */
export const MAX_MESSAGE_DEPTH = MAX_JSON_DEPTH + 8;

/**
 * Decodes and validates one message body. Never throws: a body that is not JSON, not an
 * object, of an unsupported `v`, of an unknown `kind` or not matching its schema gives
 * `{ok: false, reason}` with a sentence naming the problem (for the dead-letter record).
 * Unknown fields are ignored (dropped); see `envelope.ts` for the versioning rule.
 *
 * Valid `dispatch`, `result`, `ack` and `refusal` bodies are accepted by a hand-written check
 * (`fast-accept.ts`) without zod; anything it is not sure of is decided by zod, as in
 * `parseMessageStrict`, so both give the same outcome for every body.
 */
export function parseMessage(raw: Buffer | string): ParsedMessage {
  return decode(raw, true);
}

/**
 * `parseMessage` deciding every body with zod alone (no fast accept path): the reference the
 * fast path is tested against. Prefer `parseMessage`.
 */
export function parseMessageStrict(raw: Buffer | string): ParsedMessage {
  return decode(raw, false);
}

function decode(raw: Buffer | string, fast: boolean): ParsedMessage {
  try {
    const read = readBody(raw);
    if (!read.ok) return read;
    const { kind, body } = read;
    // The cheap structure check says only yes or no; the reason comes from the path-building walk.
    if (fast && isStructureSound(body, MAX_MESSAGE_DEPTH)) {
      const message = fastAcceptMessage(kind, body);
      if (message !== undefined) return { ok: true, message };
    } else {
      const structural = structureProblems(body, MAX_MESSAGE_DEPTH);
      if (structural.length > 0) {
        const first = structural[0];
        return { ok: false, reason: `invalid ${kind} message: ${first === undefined ? 'bad structure' : first.detail}` };
      }
    }
    const parsed = MESSAGE_SCHEMAS[kind].safeParse(body, { reportInput: true });
    if (!parsed.success) return { ok: false, reason: `invalid ${kind} message: ${summarizeIssues(parsed.error)}` };
    return { ok: true, message: parsed.data };
  } catch (thrown) {
    // Defensive: nothing above should throw, but a consumer must never crash on a message.
    return { ok: false, reason: `message could not be read: ${thrown instanceof Error ? thrown.message : String(thrown)}` };
  }
}

/** A body read up to its kind: size, JSON, an object, a supported `v`, a known `kind`. */
export type ReadBody = { ok: true; kind: MessageKind; body: Record<string, unknown> } | { ok: false; reason: string };

/**
 * The checks every message passes before its schema: size, JSON, an object, a version this
 * build reads, a known kind. Throws only on what cannot happen (callers catch).
 */
export function readBody(raw: Buffer | string): ReadBody {
  const size = typeof raw === 'string' ? Buffer.byteLength(raw, 'utf8') : raw.length;
  if (size > MAX_MESSAGE_BYTES) return { ok: false, reason: `message is ${size} bytes, over the ${MAX_MESSAGE_BYTES}-byte limit` };
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (thrown) {
    return { ok: false, reason: `invalid JSON: ${thrown instanceof Error ? thrown.message : String(thrown)}` };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, reason: `message must be a JSON object, got ${describeValue(data)}` };
  }
  const body = data as Record<string, unknown>;
  if (!Object.hasOwn(body, 'v')) return { ok: false, reason: 'message has no protocol version "v"' };
  if (typeof body.v !== 'number' || !SUPPORTED_MESSAGE_VERSIONS.includes(body.v)) {
    return {
      ok: false,
      reason: `unsupported message version ${describeValue(body.v)} (this build reads ${SUPPORTED_MESSAGE_VERSIONS.join(', ')})`,
    };
  }
  const kind = body.kind;
  if (typeof kind !== 'string' || !Object.hasOwn(MESSAGE_SCHEMAS, kind)) {
    return { ok: false, reason: `unknown message kind ${describeValue(kind)} (known: ${MESSAGE_KINDS.join(', ')})` };
  }
  return { ok: true, kind: kind as MessageKind, body };
}

/** A zod error as one sentence: the first issues, then "and N more". */
export function summarizeIssues(error: z.ZodError): string {
  const issues = error.issues.flatMap((issue) => convertZodIssue(issue));
  const shown = issues.slice(0, REASON_ISSUE_LIMIT).map((issue) => issue.message);
  const more = issues.length - shown.length;
  return `${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/**
 * Validates a message and encodes it as a UTF-8 JSON body. Unknown fields are dropped.
 *
 * @throws ValidationError when the message does not match its schema (a producer bug).
 */
export function encodeMessage(message: Message): Buffer {
  const schema = MESSAGE_SCHEMAS[message.kind] as z.ZodType<Message> | undefined;
  if (schema === undefined || message.v !== MESSAGE_VERSION) {
    throw new ValidationError(
      [{ path: schema === undefined ? 'kind' : 'v', message: `cannot encode kind ${describeValue(message.kind)} version ${describeValue(message.v)}` }],
      'message',
    );
  }
  const parsed = schema.safeParse(message, { reportInput: true });
  if (!parsed.success) {
    throw new ValidationError(parsed.error.issues.flatMap((issue) => convertZodIssue(issue)), `${message.kind} message`);
  }
  return Buffer.from(JSON.stringify(parsed.data), 'utf8');
}

/**
 * Encodes a message whose items were validated when they were built (the worker's outbox
 * items, the broker's dispatch items): on these hot paths re-validating every item with zod
 * cost more than the rest of the publish. Checks only the envelope; the consumer still
 * validates everything (`parseMessage`).
 *
 * @throws ValidationError for an unknown kind or version (a producer bug).
 */
export function encodeTrustedMessage(message: Message): Buffer {
  if (!Object.hasOwn(MESSAGE_SCHEMAS, message.kind) || message.v !== MESSAGE_VERSION) {
    throw new ValidationError([{ path: 'kind', message: `cannot encode kind ${describeValue(message.kind)} version ${describeValue(message.v)}` }], 'message');
  }
  return Buffer.from(JSON.stringify(message), 'utf8');
}
