/** What workers send back on `<ns>.events` (§4, §5): `ack`, `refusal`, `result`; batched (R10). */
import { z } from 'zod';
import { describeValue } from '../task/issues.js';
import { batchOf, envelopeShape, idSchema, instantSchema, OUTPUT_TAIL_MAX_BYTES } from './envelope.js';
import { base64Bytes, byteCountSchema, logChunkShape } from './log.js';

/** "Received, will run" for one execution (not "done"). */
export const ackItemSchema = z.object({
  executionId: idSchema,
  instanceId: idSchema,
  /** When the worker ACKed, by its clock. */
  at: instantSchema,
});

/** `ack` (worker → broker). */
export const ackMessageSchema = z.object({
  ...envelopeShape,
  kind: z.literal('ack'),
  workerId: idSchema,
  items: batchOf(ackItemSchema),
});

/**
 * Why a worker did not take (or gave back) a dispatch. `EXPIRED`/`CLOCK_SKEW` re-route without
 * an attempt (R16); `RECALLED` answers a broker's recall of a held dispatch that had not started
 * (R9 prefetch), likewise re-routed without an attempt.
 */
export const REFUSAL_REASONS = ['EXPIRED', 'CLOCK_SKEW', 'SHUTTING_DOWN', 'DUPLICATE', 'RECALLED'] as const;
/** Longest `detail` of a refusal item, in characters. */
export const REFUSAL_DETAIL_MAX_LENGTH = 1_000;
/** A refusal reason. */
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** One refused execution. */
export const refusalItemSchema = z.object({
  executionId: idSchema,
  instanceId: idSchema,
  reason: z.enum(REFUSAL_REASONS),
  /** When it was refused, by the worker's clock. */
  at: instantSchema.optional(),
  /** Free text, e.g. the measured clock offset. */
  detail: z.string().max(REFUSAL_DETAIL_MAX_LENGTH).optional(),
});

/** `refusal` (worker → broker): dispatches the worker will not run; their slots are released. */
export const refusalMessageSchema = z.object({
  ...envelopeShape,
  kind: z.literal('refusal'),
  workerId: idSchema,
  items: batchOf(refusalItemSchema),
});

/** How an execution ended. */
export const RESULT_OUTCOMES = ['SUCCESS', 'FAILED', 'TIMEOUT', 'CANCELED', 'WORKER_RESTART'] as const;
/** Longest `error` of a result item, in characters. */
export const RESULT_ERROR_MAX_LENGTH = 4_096;
/** Who sent a result message: a worker, or admin-api relaying an asynchronous report (R15). */
export const RESULT_ORIGINS = ['worker', 'report'] as const;
/** An execution outcome. */
export type ResultOutcome = (typeof RESULT_OUTCOMES)[number];

/**
 * Most output bytes (decoded, both streams) a result may carry in `output`: an attempt whose
 * output still unsent at its end is this short sends it in its result (DESIGN §11, #24). 8 KiB
 * keeps a message of 500 results under 6 MB of base64.
 */
export const OUTPUT_IN_RESULT_MAX_BYTES = 8_192;
/** Most chunks a result's `output` may carry (a switch of stream starts a chunk). */
export const OUTPUT_IN_RESULT_MAX_CHUNKS = 64;

/** A chunk of output inside a result: the fields of a `log` chunk item without the ids. */
export const resultOutputChunkSchema = z.object(logChunkShape(OUTPUT_IN_RESULT_MAX_BYTES));

/**
 * The rest of an attempt's output and its end, carried by its result instead of `log`
 * messages: the chunks not sent before (all of a short job's output) and the end marker's sizes.
 * Only a worker whose dispatch said `outputInResult` sends it (a broker that knows the field).
 */
export const resultOutputSchema = z
  .object({
    chunks: z.array(resultOutputChunkSchema).max(OUTPUT_IN_RESULT_MAX_CHUNKS),
    /** Bytes the job wrote to stdout (kept or not). */
    stdoutBytes: byteCountSchema,
    /** Bytes the job wrote to stderr (kept or not). */
    stderrBytes: byteCountSchema,
    /** True when bytes past `AX_LOG_MAX_BYTES` were dropped. */
    truncated: z.boolean(),
  })
  .refine((output) => output.chunks.reduce((sum, c) => sum + base64Bytes(c.data), 0) <= OUTPUT_IN_RESULT_MAX_BYTES, {
    error: `chunks must hold at most ${OUTPUT_IN_RESULT_MAX_BYTES} bytes in all`,
    path: ['chunks'],
  });

/** The outcome of one execution. */
export const resultItemSchema = z
  .object({
    executionId: idSchema,
    instanceId: idSchema,
    outcome: z.enum(RESULT_OUTCOMES),
    /** Process exit code (shell), HTTP status (http); null when killed by a signal. */
    exitCode: z.int().nullable().optional(),
    /** The end of the output, at most `OUTPUT_TAIL_MAX_BYTES` bytes of UTF-8. */
    outputTail: z
      .string()
      .refine((tail) => Buffer.byteLength(tail, 'utf8') <= OUTPUT_TAIL_MAX_BYTES, {
        error: (iss) => `must be at most ${OUTPUT_TAIL_MAX_BYTES} bytes, got ${Buffer.byteLength(String(iss.input), 'utf8')}`,
      })
      .optional(),
    /** True when output was cut to fit the tail. */
    outputTruncated: z.boolean().optional(),
    /** One line on why it failed. */
    error: z.string().max(RESULT_ERROR_MAX_LENGTH).optional(),
    /** `data` of a synchronous HTTP result or an async report. */
    data: z.record(z.string(), z.unknown()).optional(),
    startedAt: instantSchema.optional(),
    endedAt: instantSchema,
    /**
     * True when an HTTP endpoint answered 202: accepted, NOT final. The worker slot is freed;
     * the instance stays RUNNING until the business reports (R15). Requires outcome SUCCESS.
     */
    async: z.boolean().optional(),
    /**
     * True when the attempt wrote no byte of output: the worker sends no `end` log item for it
     * and the broker stores the (empty) end of its output with the result (DESIGN §11: jobs
     * that print nothing cost nothing extra). Ignored on a relayed report.
     */
    printedNothing: z.boolean().optional(),
    /**
     * The attempt's output not sent as `log` messages, and its end (`resultOutputSchema`): the
     * broker stores them with the result, from the worker that ran it. Ignored on a report.
     */
    output: resultOutputSchema.optional(),
  })
  .superRefine((item, ctx) => {
    if (item.async === true && item.outcome !== 'SUCCESS') {
      ctx.addIssue({ code: 'custom', path: ['async'], message: `async results must have outcome SUCCESS, got ${describeValue(item.outcome)}` });
    }
  });

/** `result` (worker → broker, or admin-api for an async report, R15). */
export const resultMessageSchema = z.object({
  ...envelopeShape,
  kind: z.literal('result'),
  /** The worker that ran it (for an async report: the execution's recorded worker). */
  workerId: idSchema,
  /** Who sent it: the worker (default) or admin-api relaying an async report. */
  origin: z.enum(RESULT_ORIGINS).optional(),
  items: batchOf(resultItemSchema),
});

/** One ACKed execution. */
export type AckItem = z.output<typeof ackItemSchema>;
/** An `ack` message. */
export type AckMessage = z.output<typeof ackMessageSchema>;
/** One refused execution. */
export type RefusalItem = z.output<typeof refusalItemSchema>;
/** A `refusal` message. */
export type RefusalMessage = z.output<typeof refusalMessageSchema>;
/** Output carried by a result. */
export type ResultOutput = z.output<typeof resultOutputSchema>;
/** One execution outcome. */
export type ResultItem = z.output<typeof resultItemSchema>;
/** A `result` message. */
export type ResultMessage = z.output<typeof resultMessageSchema>;
