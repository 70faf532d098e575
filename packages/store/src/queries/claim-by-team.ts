/**
 * R23's claim (#45 "Noisy neighbours"): no instance that can start waits behind instances that
 * cannot. The claim reads, per team, only rows that can start now; what is held is never locked
 * nor counted against the claim:
 *
 * - R4: an instance of a `serial` or `{queue}` task while another of its instances is
 *   DISPATCHED or RUNNING, and an instance of a `{queue}` task beyond its earliest waiting slot;
 * - R20: an instance of a rerun batch that has its `concurrency` runs;
 * - R11: an instance no live worker could take (its team and tags: `routable`);
 * - #22: a held backlog (`defer`); a team at its `maxRunning` is not claimed for at all.
 *
 * The filters run in a plain read (no locking clause: MariaDB applies a statement's locking
 * clause to the rows its subqueries read too, and would lock, or skip, the running instances
 * the R4 and R20 filters count); then the rows read are locked by primary key with
 * `FOR UPDATE SKIP LOCKED`, re-checked as due and PENDING (another broker may have taken one
 * between the two: it is skipped, not waited for).
 * Rows that need bookkeeping rather than a worker (no route: R11's NO_WORKER event and alert;
 * a deleted task) are claimed by {@link claimUnroutable}, only with what room a claim has left.
 */
import type { Queryable } from '../schema-version.js';
import { claimRowsToInstances, CLAIM_SELECT, type ClaimedInstance, type ClaimRow } from './dispatch.js';

/** What live workers can take: one entry per distinct (teams, tags) of the non-draining workers. */
export interface WorkerCapability {
  /** Teams served; null = every team (a worker enrolled for all). */
  readonly teams: readonly string[] | null;
  readonly tags: readonly string[];
}

/** Options of {@link claimStartable}. */
export interface StartableClaim {
  /** The team (`null`: rows written before 0010, which have none; they go by their task's). */
  readonly team: string | null;
  readonly limit: number;
  readonly capabilities: readonly WorkerCapability[];
  /** Backlog deferral (#22): instances below `belowPriority` of these tasks are held. */
  readonly defer?: { readonly belowPriority: number; readonly taskIds: readonly string[] } | undefined;
  /** Rows this transaction has claimed already (SKIP LOCKED does not skip its own locks). */
  readonly excludeIds?: readonly string[];
  /** With `team: null`: teams (of the rows' tasks) at their `maxRunning`, left out. */
  readonly skipTeams?: readonly string[];
}

/**
 * The team of a row: its own, or for a row written before 0010 its task's. `i` is the instance
 * and `t` its task in the caller's SQL: the claim joins the task anyway, so this is
 * instanceTeamSql (instances-read.ts) without its subquery.
 */
const ROW_TEAM = 'COALESCE(i.team, t.team)';

/** SQL true when some capability serves the row's team and carries all of its task's tags (R11), with its parameters. */
function routableSql(capabilities: readonly WorkerCapability[]): { sql: string; params: unknown[] } {
  if (capabilities.length === 0) return { sql: 'FALSE', params: [] };
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const c of capabilities) {
    // JSON_CONTAINS(target, candidate): every tag of the task is among the worker's.
    if (c.teams === null) {
      parts.push('JSON_CONTAINS(?, t.tags)');
      params.push(JSON.stringify(c.tags));
    } else if (c.teams.length > 0) {
      parts.push(`(${ROW_TEAM} IN (?) AND JSON_CONTAINS(?, t.tags))`);
      params.push([...c.teams], JSON.stringify(c.tags));
    }
  }
  return parts.length === 0 ? { sql: 'FALSE', params: [] } : { sql: `(${parts.join(' OR ')})`, params };
}

/** R4: tasks whose block strategy holds their instances while one of them runs, and that have a run now. */
const SERIAL_BUSY = `SELECT bt.id FROM task bt JOIN task_instance br ON br.task_name = bt.name
   WHERE br.state IN ('DISPATCHED', 'RUNNING') AND bt.block_strategy IN ('serial', 'queue')`;

/** R20: rerun batches with `concurrency` runs now. */
const BATCHES_FULL = `SELECT rb.id FROM rerun_batch rb JOIN task_instance ra ON ra.rerun_batch_id = rb.id
   WHERE ra.state IN ('DISPATCHED', 'RUNNING') AND rb.concurrency IS NOT NULL
   GROUP BY rb.id, rb.concurrency HAVING COUNT(*) >= rb.concurrency`;

/** R4 `{queue}`: only the earliest waiting slot of the task may start. */
const QUEUE_HEAD = `NOT (t.block_strategy = 'queue' AND i.expected_time >
   (SELECT MIN(qw.expected_time) FROM task_instance qw WHERE qw.task_name = t.name AND qw.state IN ('WAITING', 'PENDING', 'RETRY_WAIT')))`;

/**
 * Locks up to `limit` due PENDING instances of one team that can start now (see the file
 * comment), highest priority first, then oldest due. Call inside the claim transaction.
 */
export async function claimStartable(conn: Queryable, c: StartableClaim): Promise<ClaimedInstance[]> {
  if (c.limit <= 0) return [];
  const routable = routableSql(c.capabilities);
  if (routable.sql === 'FALSE') return [];
  const params: unknown[] = [];
  let where = "i.state = 'PENDING' AND i.due_at <= NOW(3)";
  if (c.team === null) where += ' AND i.team IS NULL';
  else {
    where += ' AND i.team = ?';
    params.push(c.team);
  }
  where += ` AND i.task_id NOT IN (${SERIAL_BUSY})`;
  where += ` AND (i.rerun_batch_id IS NULL OR i.rerun_batch_id NOT IN (${BATCHES_FULL}))`;
  const legacySkip = c.team === null && c.skipTeams !== undefined && c.skipTeams.length > 0;
  where += ` AND EXISTS (SELECT 1 FROM task t WHERE t.id = i.task_id AND ${routable.sql} AND ${QUEUE_HEAD}${legacySkip ? ' AND t.team NOT IN (?)' : ''})`;
  params.push(...routable.params);
  if (legacySkip) params.push([...new Set(c.skipTeams)]);
  const defer = c.defer !== undefined && c.defer.taskIds.length > 0 ? c.defer : undefined;
  if (defer !== undefined) {
    where += ' AND NOT (i.priority < ? AND i.task_id IN (?))';
    params.push(defer.belowPriority, [...new Set(defer.taskIds)]);
  }
  if (c.excludeIds !== undefined && c.excludeIds.length > 0) {
    where += ' AND i.id NOT IN (?)';
    params.push(c.excludeIds);
  }
  params.push(c.limit);
  return lockCandidates(conn, where, params);
}

/** Reads the ids that `where` selects (no lock), then locks those still due and PENDING, in the claim order. */
async function lockCandidates(conn: Queryable, where: string, params: unknown[]): Promise<ClaimedInstance[]> {
  const [candidates] = await conn.query<ClaimRow[]>(`SELECT i.id FROM task_instance i WHERE ${where} ORDER BY i.priority DESC, i.due_at ASC LIMIT ?`, params);
  return lockIds(conn, candidates);
}

/** Locks the rows read (no lock) that are still due and PENDING, in the claim order; another broker's are skipped. */
async function lockIds(conn: Queryable, candidates: readonly ClaimRow[]): Promise<ClaimedInstance[]> {
  if (candidates.length === 0) return [];
  const [rows] = await conn.query<ClaimRow[]>(
    `${CLAIM_SELECT} FROM task_instance i FORCE INDEX (PRIMARY)
      WHERE i.id IN (?) AND i.state = 'PENDING' AND i.due_at <= NOW(3)
      ORDER BY i.priority DESC, i.due_at ASC
      FOR UPDATE SKIP LOCKED`,
    [candidates.map((r) => r.id)],
  );
  return claimRowsToInstances(rows);
}

/**
 * Due PENDING rows the bookkeeping claim looks at: the first ones in the claim order. Looking
 * at every due row made each bookkeeping claim read the whole backlog (15,000 rows routed one
 * by one against the workers, 9 % of MariaDB's statement time in `ax-throughput-1`, #45) to
 * find none; a row beyond them is looked at once the rows ahead of it have gone, as in the
 * claim before R23. The backlog scan (backlog-scan.ts) still gives every held row its reason.
 */
export const UNROUTABLE_SCAN_ROWS = 1_000;

/**
 * Locks up to `limit` due PENDING instances that no live worker could take, or whose task is
 * gone, among the first {@link UNROUTABLE_SCAN_ROWS} due rows in the claim order: they need R11's
 * bookkeeping (one NO_WORKER event, an alert past the threshold) or a cancel, not a slot. Teams
 * in `skipTeams` (at their `maxRunning`) are left out.
 */
export async function claimUnroutable(
  conn: Queryable,
  c: { readonly limit: number; readonly capabilities: readonly WorkerCapability[]; readonly skipTeams?: readonly string[] },
): Promise<ClaimedInstance[]> {
  if (c.limit <= 0) return [];
  const routable = routableSql(c.capabilities);
  const params: unknown[] = [];
  let head = "h.state = 'PENDING' AND h.due_at <= NOW(3)";
  if (c.skipTeams !== undefined && c.skipTeams.length > 0) {
    head += ' AND (h.team IS NULL OR h.team NOT IN (?))';
    params.push([...new Set(c.skipTeams)]);
  }
  params.push(UNROUTABLE_SCAN_ROWS, ...routable.params, c.limit);
  // The head is a derived table with its own LIMIT (never merged into the outer query), so the
  // routing test below runs on those rows only. `i` is what routableSql names the instance.
  const [candidates] = await conn.query<ClaimRow[]>(
    `SELECT i.id FROM (SELECT h.id, h.task_id, h.team, h.priority, h.due_at FROM task_instance h
                        WHERE ${head} ORDER BY h.priority DESC, h.due_at ASC LIMIT ?) i
      WHERE NOT EXISTS (SELECT 1 FROM task t WHERE t.id = i.task_id AND ${routable.sql})
      ORDER BY i.priority DESC, i.due_at ASC LIMIT ?`,
    params,
  );
  return lockIds(conn, candidates);
}

/**
 * The teams that have PENDING instances (`null`: rows written before 0010), by a loose scan
 * of `idx_instance_team_claim`'s prefix (one index entry per team, not one per row). A team
 * whose rows are all due later is listed too; its claim then finds nothing.
 */
export async function teamsWithPending(db: Queryable): Promise<Array<string | null>> {
  const [rows] = await db.query<ClaimRow[]>(`SELECT team FROM task_instance WHERE state = 'PENDING' GROUP BY team`);
  return rows.map((r) => (r.team === null ? null : String(r.team)));
}
