/**
 * Reading a worker's batched reply item by item (#45, DESIGN §11 "Noisy neighbours"): one
 * message carries the ACKs, results or output of many executions, other teams' included (R10),
 * so one bad item must not take the others down with it. `parseMessageByItem` validates the
 * envelope as `parseMessage` does and then each item on its own, against the same schemas of
 * the catalog: it returns the good items and, for each bad one, why it was refused.
 *
 * Cost: a valid message takes `parseMessage`'s path (the fast accept path, then zod) and
 * nothing more; only a message `parseMessage` refuses is read again, item by item.
 */
import { z } from 'zod';
import { structureProblems } from '../task/json-guard.js';
import { MAX_MESSAGE_DEPTH, MESSAGE_SCHEMAS, parseMessage, readBody, summarizeIssues, type MessageOf } from './codec.js';
import { MAX_ITEMS_PER_MESSAGE } from './envelope.js';
import { isId } from './fast-fields.js';
import { logItemSchema } from './log.js';
import { ackItemSchema, refusalItemSchema, resultItemSchema } from './worker-replies.js';

/** The kinds read item by item: what workers (and admin-api's reports) send to the brokers. */
export const ITEMWISE_KINDS = ['ack', 'refusal', 'result', 'log'] as const;
/** A kind read item by item. */
export type ItemwiseKind = (typeof ITEMWISE_KINDS)[number];
/** A message of a kind read item by item. */
export type ItemwiseMessage = MessageOf<ItemwiseKind>;

const ITEM_SCHEMAS: { readonly [K in ItemwiseKind]: z.ZodType<MessageOf<K>['items'][number]> } = {
  ack: ackItemSchema,
  refusal: refusalItemSchema,
  result: resultItemSchema,
  log: logItemSchema,
};

/** Why an item was refused, as a metric label: a `__proto__` key, nesting too deep, or its schema. */
export type RefusedItemCause = 'proto_key' | 'too_deep' | 'schema';

/** An item refused on its own. */
export interface RefusedItem {
  /** Its position in the message's `items`. */
  readonly index: number;
  /** Its `executionId` when that is a well-formed id (for the log, and to fail its execution). */
  readonly executionId?: string;
  /** Its `instanceId` when that is a well-formed id. */
  readonly instanceId?: string;
  readonly cause: RefusedItemCause;
  /** One sentence naming the problem. */
  readonly reason: string;
}

/**
 * The outcome of `parseMessageByItem`. `ok: false` when the message itself cannot be read (not
 * JSON, unknown `v` or `kind`, a bad envelope: `workerId`, `items` not a batch…): nothing in it
 * can be attributed, so it is refused whole. Otherwise `message` holds the good items, in order
 * (possibly none) and `refused` the others; for a kind not read item by item (a dispatch, a
 * heartbeat…) `refused` is empty and the outcome is `parseMessage`'s.
 */
export type ParsedByItem =
  | { ok: true; message: MessageOf<Exclude<keyof typeof MESSAGE_SCHEMAS, ItemwiseKind>>; refused: readonly [] }
  | { ok: true; message: ItemwiseMessage; refused: readonly RefusedItem[] }
  | { ok: false; reason: string };

const ENVELOPES = {
  ack: envelopeOf('ack'),
  refusal: envelopeOf('refusal'),
  result: envelopeOf('result'),
  log: envelopeOf('log'),
};

/** The kind's message schema with `items` checked only as a batch (each item is checked apart). */
function envelopeOf(kind: ItemwiseKind) {
  return MESSAGE_SCHEMAS[kind].extend({ items: z.array(z.unknown()).min(1).max(MAX_ITEMS_PER_MESSAGE) });
}

function isItemwise(kind: string): kind is ItemwiseKind {
  return (ITEMWISE_KINDS as readonly string[]).includes(kind);
}

/**
 * Decodes one message; for ACKs, refusals, results and log chunks, validates each item on its
 * own (see the module comment). Never throws.
 */
export function parseMessageByItem(raw: Buffer | string): ParsedByItem {
  const whole = parseMessage(raw);
  if (whole.ok) return { ok: true, message: whole.message, refused: [] } as ParsedByItem;
  try {
    const read = readBody(raw);
    if (!read.ok || !isItemwise(read.kind)) return whole;
    const { kind, body } = read;
    // The envelope: every field but the items, with the rules a whole message has.
    const { items: rawItems, ...rest } = body;
    if (structureProblems(rest, MAX_MESSAGE_DEPTH).length > 0) return whole;
    const envelope = ENVELOPES[kind].safeParse(body);
    if (!envelope.success) return whole;
    const items: unknown[] = [];
    const refused: RefusedItem[] = [];
    (rawItems as unknown[]).forEach((item, index) => {
      const verdict = checkItem(kind, item);
      if (verdict.ok) items.push(verdict.item);
      else refused.push({ index, ...idsOf(item), cause: verdict.cause, reason: `item ${index} of a ${kind} message: ${verdict.reason}` });
    });
    return { ok: true, message: { ...envelope.data, items } as ItemwiseMessage, refused };
  } catch (thrown) {
    // Defensive, as parseMessage: a consumer must never crash on a message.
    return { ok: false, reason: `message could not be read: ${thrown instanceof Error ? thrown.message : String(thrown)}` };
  }
}

type ItemVerdict = { ok: true; item: unknown } | { ok: false; cause: RefusedItemCause; reason: string };

function checkItem(kind: ItemwiseKind, item: unknown): ItemVerdict {
  // An item sits two levels into its message (`items`, then its index): the message's depth
  // bound, counted from the item.
  const [problem] = structureProblems(item, MAX_MESSAGE_DEPTH - 2);
  if (problem !== undefined) return { ok: false, cause: problem.code, reason: problem.detail };
  const parsed = ITEM_SCHEMAS[kind].safeParse(item, { reportInput: true });
  if (!parsed.success) return { ok: false, cause: 'schema', reason: summarizeIssues(parsed.error) };
  return { ok: true, item: parsed.data };
}

function idsOf(item: unknown): { executionId?: string; instanceId?: string } {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return {};
  const { executionId, instanceId } = item as Record<string, unknown>;
  return { ...(isId(executionId) ? { executionId } : {}), ...(isId(instanceId) ? { instanceId } : {}) };
}
