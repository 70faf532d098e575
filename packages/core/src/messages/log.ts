/**
 * `log` (worker → brokers on `<ns>.logs`, DESIGN §11): chunks of a job's stdout and stderr with
 * their byte offsets, and, once an execution's output is all sent, its end marker.
 *
 * Offsets make a chunk idempotent: the store appends by (execution, stream, offset), so a chunk
 * redelivered after an outage or a worker restart changes nothing. `offset` counts bytes of the
 * chunk's own stream before it; `allOffset` counts bytes of both streams before it in the order
 * the worker captured them (the `all` view interleaves by it). Both are true positions: output
 * dropped past `AX_LOG_MAX_BYTES` leaves a gap, never a shift.
 */
import { z } from 'zod';
import { batchOf, envelopeShape, idSchema } from './envelope.js';

/** The streams of a job's output. */
export const LOG_STREAMS = ['stdout', 'stderr'] as const;
/** One stream of a job's output. */
export type LogStream = (typeof LOG_STREAMS)[number];

/** Largest decoded `data` of one chunk, bytes (a chunk is cut at this size). */
export const LOG_CHUNK_MAX_BYTES = 262_144;

/** Default `AX_LOG_MAX_BYTES`: output kept per execution, both streams together (16 MiB). */
export const DEFAULT_LOG_MAX_BYTES = 16 * 1_048_576;

/** Bytes of each stream's end always kept past `AX_LOG_MAX_BYTES` (64 KiB). */
export const LOG_TAIL_KEPT_BYTES = 65_536;

/** What `data` of a chunk must match. */
export const BASE64_PATTERN = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes a base64 text (`BASE64_PATTERN`) decodes to, as `Buffer.from(text, 'base64')` counts them. */
export function base64Bytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor(((text.length - padding) * 3) / 4));
}

/** A count of bytes. */
export const byteCountSchema = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * The fields of a chunk of output, `data` at most `maxDataBytes` decoded: in a `log` item, and
 * in a result that carries its output (`resultOutputSchema`).
 */
export function logChunkShape(maxDataBytes: number) {
  return {
    stream: z.enum(LOG_STREAMS),
    offset: byteCountSchema,
    allOffset: byteCountSchema,
    data: z
      .string()
      .min(1)
      .max(Math.ceil(maxDataBytes / 3) * 4)
      .regex(BASE64_PATTERN, { error: 'must be base64' }),
  };
}

/** One chunk: `data` is base64 of the raw bytes (output need not be UTF-8, and is kept byte for byte). */
export const logChunkItemSchema = z.object({
  part: z.literal('chunk'),
  executionId: idSchema,
  instanceId: idSchema,
  ...logChunkShape(LOG_CHUNK_MAX_BYTES),
});

/** The end of an execution's output: every byte before these sizes was sent. */
export const logEndItemSchema = z.object({
  part: z.literal('end'),
  executionId: idSchema,
  instanceId: idSchema,
  /** Bytes the job wrote to stdout (kept or not). */
  stdoutBytes: byteCountSchema,
  /** Bytes the job wrote to stderr (kept or not). */
  stderrBytes: byteCountSchema,
  /** True when bytes past `AX_LOG_MAX_BYTES` were dropped (the head and each stream's last 64 KiB are kept). */
  truncated: z.boolean(),
});

/** A chunk or an end marker. */
export const logItemSchema = z.discriminatedUnion('part', [logChunkItemSchema, logEndItemSchema]);

/** `log` (worker → brokers). */
export const logMessageSchema = z.object({
  ...envelopeShape,
  kind: z.literal('log'),
  workerId: idSchema,
  items: batchOf(logItemSchema),
});

/** One chunk of output. */
export type LogChunkItem = z.output<typeof logChunkItemSchema>;
/** The end of an execution's output. */
export type LogEndItem = z.output<typeof logEndItemSchema>;
/** A chunk or an end marker. */
export type LogItem = z.output<typeof logItemSchema>;
/** A `log` message. */
export type LogMessage = z.output<typeof logMessageSchema>;
