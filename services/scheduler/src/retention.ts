/**
 * Retention (DESIGN §9): final instances that ended more than `AX_RETENTION_DAYS` ago are
 * purged with their executions, claims and events, in small batches (one transaction each),
 * after their per-task daily aggregates were added to `task_daily_stats` (day = UTC date of
 * the slot). One scheduler at a time: a Redis lock `<ns>:lock:retention`.
 *
 * A run purges until nothing past retention is left, in passes of up to `BATCHES_PER_PASS`
 * batches (the lock is taken per pass). Until 2026-12-06 a run was one pass: with the default
 * period of an hour it purged at most 10,000 instances an hour, so any stack creating more than
 * about 3 a second outgrew its retention for good. After each full batch it pauses
 * `retentionPausePercent` of the batch's own time (pt-archiver's `--sleep-coef`): by default
 * (600) a backlog of expired history is purged at about a seventh of the speed MySQL allows, and
 * dispatch keeps the rest (bench ax-purge, 1,000/s dispatched on 2 cores: start lag p99
 * ×0.99–1.16 at 539–574 purged/s in a slow hour; 300 gave ×1.13–1.39 at 829–1,565/s; purging
 * flat out, 3,570–3,677/s, cost ×1.7–2.0).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { addToDailyStats, deleteInstancesWithHistory, forgetRolledUpDays, lockEndedInstances, purgeLogsOfInstances, withTransaction } from '@ax/store';
import type { EngineContext } from './context.js';

/** Batches per pass of the lock. */
const BATCHES_PER_PASS = 20;

/** Moves the lock's expiry on if this scheduler still holds it; 1 when it does. */
const RENEW_LOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/** The pause after a batch that took `batchMs`, at `pausePercent` of its time. */
export function retentionPauseMs(batchMs: number, pausePercent: number): number {
  return Math.round((Math.max(0, batchMs) * pausePercent) / 100);
}

/**
 * Purges everything past retention, pass after pass, until a batch comes back short or `signal`
 * (the loop's stop) fires; returns the instances purged (0 when another scheduler holds the lock).
 */
export async function purgeExpired(ctx: EngineContext, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (;;) {
    const pass = await purgeOnce(ctx, signal);
    total += pass.purged;
    if (!pass.more || signal?.aborted === true) return total;
  }
}

/** One pass under the lock: up to `BATCHES_PER_PASS` batches; `more` when its last batch was full. */
async function purgeOnce(ctx: EngineContext, signal: AbortSignal | undefined): Promise<{ purged: number; more: boolean }> {
  const lockKey = ctx.keys.lock('retention');
  const lockTtlMs = Math.max(60_000, ctx.config.retentionIntervalMs);
  const got = await ctx.redis.set(lockKey, ctx.config.schedulerId, 'PX', lockTtlMs, 'NX');
  if (got !== 'OK') return { purged: 0, more: false };
  const cutoff = new Date(ctx.clock.nowMs() - ctx.config.retentionDays * 86_400_000);
  let purged = 0;
  let more = false;
  try {
    for (let b = 0; b < BATCHES_PER_PASS; b += 1) {
      const startedMs = performance.now();
      const n = await withTransaction(ctx.pool, async (conn) => {
        const rows = await lockEndedInstances(conn, cutoff, ctx.config.retentionBatchSize);
        if (rows.length === 0) return 0;
        const stats = new Map<string, { day: string; task: string; total: number; ok: number; failed: number; canceled: number; delaySum: number; delayN: number; maxDur: number | null }>();
        for (const r of rows) {
          const day = r.expectedTime.toISOString().slice(0, 10);
          const key = `${day}|${r.taskName}`;
          const s = stats.get(key) ?? { day, task: r.taskName, total: 0, ok: 0, failed: 0, canceled: 0, delaySum: 0, delayN: 0, maxDur: null };
          s.total += 1;
          if (r.state === 'SUCCESS') s.ok += 1;
          else if (r.state === 'FAILED') s.failed += 1;
          else s.canceled += 1;
          if (r.startedAt !== null) {
            s.delaySum += Math.max(0, r.startedAt.getTime() - r.expectedTime.getTime());
            s.delayN += 1;
            s.maxDur = Math.max(s.maxDur ?? 0, r.endedAt.getTime() - r.startedAt.getTime());
          }
          stats.set(key, s);
        }
        await addToDailyStats(
          conn,
          [...stats.values()].map((d) => ({
            day: d.day,
            taskName: d.task,
            total: d.total,
            succeeded: d.ok,
            failed: d.failed,
            canceled: d.canceled,
            avgTriggerDelayMs: d.delayN === 0 ? null : Math.round(d.delaySum / d.delayN),
            maxDurationMs: d.maxDur,
          })),
        );
        const ids = rows.map((r) => r.id);
        // Job output first (found through the executions deleted below), on the pool in short
        // statements of its own: millions of chunks never hold the locks dispatch waits on. A
        // rollback after it leaves instances past retention without their logs, purged next time.
        await purgeLogsOfInstances(ctx.pool, ids);
        await deleteInstancesWithHistory(conn, ids);
        // The dashboard's kept figures of those days counted them (stats-rollup.ts).
        await forgetRolledUpDays(conn, rows.map((r) => r.dueDay));
        return rows.length;
        // READ COMMITTED: the locking read takes the expired rows only. Under REPEATABLE READ its
        // next-key lock on the oldest ended row also locks the gap before it in
        // idx_instance_ended, where every new instance's NULL ended_at goes, so an instance
        // inserted meanwhile would wait for the whole batch.
      }, { isolationLevel: 'READ COMMITTED' });
      purged += n;
      more = n >= ctx.config.retentionBatchSize;
      if (!more) break;
      const pauseMs = retentionPauseMs(performance.now() - startedMs, ctx.config.retentionPausePercent);
      if (pauseMs > 0) await sleep(pauseMs, undefined, { signal }).catch(() => undefined);
      if (signal?.aborted === true) break;
      // A pass of slow batches (with their pauses) can outlive the lock's TTL: renew it, and stop
      // if it has passed to another scheduler meanwhile, which then purges alone.
      if ((await ctx.redis.eval(RENEW_LOCK, 1, lockKey, ctx.config.schedulerId, lockTtlMs)) !== 1) {
        more = false;
        break;
      }
    }
  } finally {
    // Release only our own lock.
    await ctx.redis
      .eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end", 1, lockKey, ctx.config.schedulerId)
      .catch((error: unknown) => ctx.logger.warn({ err: error }, 'releasing the retention lock failed'));
  }
  if (purged > 0) {
    ctx.metrics.purged.inc(purged);
    ctx.logger.info({ purged, cutoff: cutoff.toISOString() }, 'retention purged final instances');
  }
  return { purged, more };
}
