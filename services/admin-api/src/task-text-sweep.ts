/**
 * Keeps task search's substring index whole (migration 0009, task-text.ts in @ax/store).
 * This build writes a task's trigrams in the transaction of each definition write; a task whose
 * `updated_at` moved without them is re-indexed here, every {@link TASK_TEXT_SWEEP_INTERVAL_MS}:
 * tasks written by the previous build during a rolling upgrade (R22), and the writes that
 * change no text (enable, pause, a calendar edit) but move `updated_at`. One scan of the task
 * table beside the index's (~100 ms for 100,000 tasks) when there is nothing to do.
 */
import { startBackgroundLoop, type BackgroundLoop, type Logger } from '@ax/kit';
import { reindexStaleTaskTexts, type StorePool } from '@ax/store';

/** How often the sweep looks, ms. */
export const TASK_TEXT_SWEEP_INTERVAL_MS = 60_000;
/** Tasks re-indexed per transaction. */
const BATCH_TASKS = 500;

/** Re-indexes every stale task, a batch per transaction (until `signal` aborts); returns how many. */
export async function sweepTaskTexts(pool: StorePool, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await reindexStaleTaskTexts(pool, BATCH_TASKS);
    total += n;
    if (n < BATCH_TASKS || signal?.aborted === true) return total;
  }
}

/** Starts the sweep; `stop()` it before the pool ends. */
export function startTaskTextSweep(opts: { readonly pool: StorePool; readonly logger: Logger; readonly intervalMs?: number }): BackgroundLoop {
  return startBackgroundLoop({
    name: 'task-text-sweep',
    intervalMs: opts.intervalMs ?? TASK_TEXT_SWEEP_INTERVAL_MS,
    logger: opts.logger,
    // Soon after start: a task the previous build wrote is found by search again.
    initialDelayMs: 5_000,
    run: async (signal) => {
      const n = await sweepTaskTexts(opts.pool, signal);
      if (n > 0) opts.logger.info({ tasks: n }, 'task search: re-indexed tasks whose text was written without the index');
    },
  });
}
