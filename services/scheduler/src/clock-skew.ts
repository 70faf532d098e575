/**
 * Clock skew (DESIGN §9): the scheduler compares its clock with MySQL `NOW(3)` (the middle of
 * the round trip). Above `AX_SCHEDULER_SKEW_LIMIT_MS` it stops firing and raises a
 * `CLOCK_SKEW` alert; once the offset is back under the limit it resumes, treating the paused
 * time like any other gap (misfire policy / re-scan).
 */
import type { RowDataPacket } from 'mysql2';
import { raiseAlert } from '@ax/store';
import type { EngineContext } from './context.js';

/** Offset of MySQL's clock from ours, ms (positive: MySQL ahead). */
export async function measureSkewMs(ctx: EngineContext): Promise<number> {
  const t0 = ctx.clock.nowMs();
  const [rows] = await ctx.pool.query<Array<RowDataPacket & { now: Date }>>('SELECT NOW(3) AS now');
  const t1 = ctx.clock.nowMs();
  const db = rows[0]?.now.getTime();
  if (db === undefined) throw new Error('SELECT NOW(3) returned no row');
  return db - (t0 + t1) / 2;
}

/** Measures the skew and pauses or resumes firing. Returns the offset in ms. */
export async function checkClockSkew(ctx: EngineContext): Promise<number> {
  const offsetMs = await measureSkewMs(ctx);
  ctx.state.dbOffsetMs = offsetMs;
  ctx.metrics.clockSkew.set(offsetMs / 1000);
  const over = Math.abs(offsetMs) > ctx.config.skewLimitMs;
  if (over && !ctx.state.firingPaused) {
    ctx.state.firingPaused = true;
    ctx.metrics.firingPaused.set(1);
    ctx.logger.error({ offsetMs, limitMs: ctx.config.skewLimitMs }, 'clock skew over the limit: firing stopped');
    const hour = new Date(ctx.clock.nowMs()).toISOString().slice(0, 13);
    await raiseAlert(ctx.pool, {
      kind: 'CLOCK_SKEW',
      severity: 'critical',
      subject: `scheduler:${ctx.config.schedulerId}:${hour}`,
      message: `scheduler ${ctx.config.schedulerId} is ${Math.round(offsetMs)} ms off MySQL NOW(3) (limit ${ctx.config.skewLimitMs} ms); it stopped firing`,
    });
  } else if (!over && ctx.state.firingPaused) {
    ctx.state.firingPaused = false;
    ctx.state.liveSinceMs = ctx.clock.nowMs();
    ctx.metrics.firingPaused.set(0);
    ctx.logger.info({ offsetMs }, 'clock skew back under the limit: firing resumed');
  }
  return offsetMs;
}
