/** Worker state and control: `heartbeat` (worker → brokers) and `cancel` (broker → worker control queue, R12). */
import { z } from 'zod';
import { envelopeShape, idSchema, instantSchema, MAX_ITEMS_PER_MESSAGE } from './envelope.js';

/** `heartbeat`: the worker's registry snapshot, every 5 s (§5, R14). */
export const heartbeatMessageSchema = z.object({
  ...envelopeShape,
  kind: z.literal('heartbeat'),
  workerId: idSchema,
  host: z.string(),
  tags: z.array(z.string()),
  cores: z.int().min(1),
  slots: z.int().min(0),
  /** Executions running (slots in use). */
  running: z.int().min(0),
  /** The executions it runs: its lease (R14). */
  runningExecutionIds: z.array(idSchema),
  avgDurationMs5m: z.number().min(0),
  draining: z.boolean(),
  /** Software version of the worker. */
  version: z.string(),
  startedAt: instantSchema,
  /** When it was sent, by the worker's clock. */
  at: instantSchema,
  /** Last measured offset of the worker's clock against Redis `TIME`, ms. */
  clockOffsetMs: z.number().optional(),
  /** Slots kept for priority ≥ `minPriority` (`AX_WORKER_RESERVED_SLOTS`); absent = none. */
  reservedSlots: z.object({ slots: z.int().min(1), minPriority: z.int().min(0).max(9) }).optional(),
  /**
   * Dispatches it may hold beyond its slots (`AX_WORKER_JOB_PREFETCH`, R9 prefetch): brokers
   * reserve it up to `slots + prefetch`. Absent = 0 (workers from before prefetch).
   */
  prefetch: z.int().min(0).optional(),
  /**
   * The dispatches it holds ACKed but not started (waiting for a slot), each with how long it
   * has held it at `at` (ms, its monotonic clock): what a broker may recall (R9). They are in
   * `runningExecutionIds` too (the lease). Absent = none.
   */
  held: z.array(z.object({ executionId: idSchema, heldMs: z.number().min(0) })).optional(),
});

/** `cancel`: stop these executions (kill them if running; drop them if not started). */
export const cancelMessageSchema = z.object({
  ...envelopeShape,
  kind: z.literal('cancel'),
  /** The worker addressed (its control queue). */
  workerId: idSchema.optional(),
  executionIds: z.array(idSchema).min(1).max(MAX_ITEMS_PER_MESSAGE),
  /** A reason label, e.g. `CANCELED_BY_USER`, `COVERED`, `SUPERSEDED`. */
  reason: z.string().min(1).max(200),
});

/**
 * The `reason` of a cancel that recalls a held dispatch (R9 prefetch): the worker releases it
 * when it has not started (refusal `RECALLED`: re-routed without an attempt) and otherwise lets
 * it run (already started).
 */
export const RECALL_REASON = 'RECALL';

/** A `heartbeat` message. */
export type HeartbeatMessage = z.output<typeof heartbeatMessageSchema>;
/** A `cancel` message. */
export type CancelMessage = z.output<typeof cancelMessageSchema>;
