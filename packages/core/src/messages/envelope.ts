/**
 * What every message shares (DESIGN §4, §5, §10 R10, R22): a protocol version `v`, a `kind`,
 * and batches of items (several instances per message).
 *
 * Versioning (R22): `v` changes only on an incompatible change. Additive changes (a new
 * optional field) keep `v`, and readers ignore fields they do not know, so an older consumer
 * reads a newer producer's message of the same `v`. A consumer rejects only a `v` outside
 * `SUPPORTED_MESSAGE_VERSIONS` — a version it cannot read — and the message is dead-lettered.
 * (Exception: `exec` inside a dispatch is strict, like the task definition it comes from — a
 * worker must not run a job with a field it does not understand.)
 */
import { z } from 'zod';
import { describeValue } from '../task/issues.js';

/** The protocol version this build writes. */
export const MESSAGE_VERSION = 1;

/** Protocol versions this build reads. */
export const SUPPORTED_MESSAGE_VERSIONS: readonly number[] = [1];

/** Most items one message may carry (bounds a consumer's memory per message). */
export const MAX_ITEMS_PER_MESSAGE = 1_000;

/** Largest message accepted by `parseMessage`, bytes. */
export const MAX_MESSAGE_BYTES = 16 * 1_048_576;

/** Largest output tail a result may carry, bytes (DESIGN §8: 64 KiB). */
export const OUTPUT_TAIL_MAX_BYTES = 65_536;

/** An id as it travels: a non-empty string (BIGINT ids as decimal strings; execution ids are UUIDv7). */
/** Longest id (execution, instance, task, worker) a message may carry. */
export const ID_MAX_LENGTH = 128;
export const idSchema = z.string().min(1).max(ID_MAX_LENGTH);

/** An instant: ISO-8601 with `Z` or an offset (producers write `Date#toISOString()`). */
export const instantSchema = z.iso.datetime({
  offset: true,
  error: (iss) => `must be an ISO-8601 date-time, got ${describeValue(iss.input)}`,
});

/** A business date, `YYYY-MM-DD`. */
export const bizDateSchema = z.iso.date({ error: (iss) => `must be a date YYYY-MM-DD, got ${describeValue(iss.input)}` });

/** The fields every message starts with. */
export const envelopeShape = {
  /** Protocol version. */
  v: z.literal(MESSAGE_VERSION),
} as const;

/** A non-empty batch of items, at most `MAX_ITEMS_PER_MESSAGE`. */
export function batchOf<T extends z.ZodType>(item: T) {
  return z.array(item).min(1).max(MAX_ITEMS_PER_MESSAGE);
}
