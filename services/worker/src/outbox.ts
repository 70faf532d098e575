/**
 * The worker's local durable outbox (DESIGN §5, R12, R13): a SQLite file in WAL mode.
 *
 * - `dispatch`: one row per execution ever received (unique `execution_id`), so a redelivered
 *   dispatch is recognised and never run twice (R12). It records the process group id and the
 *   group leader's start time before the job is let go (R13), so a restarted worker can kill
 *   survivors of its own and nothing else.
 * - `outgoing`: ack / refusal / result items to send to the brokers. A row stays unconfirmed
 *   until the publish was confirmed by RabbitMQ; the replay loop (`publisher.ts`) resends what
 *   is unconfirmed across RabbitMQ outages and worker restarts. `(kind, execution_id)` is
 *   unique: an execution has at most one ack, one refusal and one result.
 * - `log_outgoing` (layout 2): job output not yet confirmed by RabbitMQ (DESIGN §11), one row per
 *   write of the log shipper — the comma-joined `log` items of many executions, ready to be put
 *   into a message. A row is deleted once its publish is confirmed (`logs/log-publisher.ts`), so
 *   the table holds only what a RabbitMQ outage or a restart left unshipped.
 *
 * All calls are synchronous (better-sqlite3): a write has reached the WAL when the call returns.
 *
 * Layout (`PRAGMA user_version`, see `migrate`): each index holds only the rows its queries look
 * for, so a job's rows pass through each index once and every periodic query (prune, heartbeat,
 * recovery) reads what it returns, not the day of history the file keeps.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { DispatchItem } from '@ax/core';

/** Where a dispatch is in its life on this worker. */
export type DispatchState = 'received' | 'acked' | 'running' | 'done' | 'refused' | 'expired';

/** What the worker sends back, by kind. */
export type OutgoingKind = 'ack' | 'refusal' | 'result';

/** A dispatch as recorded. */
/**
 * What the outbox keeps of a dispatch item: what a restart reads back (R13: the ids of the
 * `WORKER_RESTART` result, names for its log line). Not the whole item: at thousands of jobs a
 * second, serializing and writing ~500 bytes per job was ~5 µs of the worker's CPU each.
 */
export type RecordedItem = Pick<DispatchItem, 'executionId' | 'instanceId' | 'taskName' | 'traceId' | 'attempt'>;

export interface DispatchRow {
  readonly executionId: string;
  readonly instanceId: string;
  /** What is kept of the item (older files hold the whole item; these fields are in both). */
  readonly item: RecordedItem;
  readonly state: DispatchState;
  /** Process group of the running job (shell/plugin), once spawned. */
  readonly pgid: number | null;
  /** Start time of the group leader (`/proc/<pid>/stat` field 22, clock ticks since boot). */
  readonly procStart: string | null;
  /** True once an HTTP endpoint answered 202 (R15: never reported WORKER_RESTART). */
  readonly accepted: boolean;
  readonly receivedAtMs: number;
}

/** An unconfirmed outgoing item. */
export interface OutgoingRow {
  readonly id: number;
  readonly kind: OutgoingKind;
  readonly executionId: string;
  /** The item as it goes into the message (`AckItem`, `RefusalItem` or `ResultItem`). */
  readonly item: Record<string, unknown>;
  readonly attempts: number;
  /** When it was written (worker clock). */
  readonly createdAtMs: number;
}

/** A row of unshipped job output: `log` items (JSON texts, comma-joined) of one shipper write. */
export interface LogRow {
  readonly id: number;
  /** Item texts joined by commas: the inside of a message's `items` array. */
  readonly itemsJson: string;
  readonly items: number;
  /** Decoded bytes of the chunks' `data`. */
  readonly dataBytes: number;
}

/**
 * `next_attempt_ms` of an item the publisher sends from memory: never due by itself, and not a
 * retry to wait for (`nextDueMs`); a restart makes it due (`releaseHolds`).
 */
export const HELD_IN_MEMORY = Number.MAX_SAFE_INTEGER;

/** Options of `openOutbox`. */
export interface OutboxOptions {
  /**
   * The SQLite file; its directory is created. `:memory:` for tests. R25: the folder is made mode
   * 0700 and the file, its WAL and shared-memory file 0600: the worker's, never a job's.
   */
  readonly file: string;
}

/** R25: the outbox folder 0700, the database and SQLite's side files 0600 (also those of older workers). */
function lockOutboxFiles(file: string): void {
  chmodSync(path.dirname(file), 0o700);
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (existsSync(f)) chmodSync(f, 0o600);
  }
}

/** The layout this build writes (`PRAGMA user_version`). Files written before layouts were numbered read 0. */
export const OUTBOX_LAYOUT_VERSION = 2;

// Partial-index conditions are written as OR chains, not `state IN (...)`: SQLite evaluates them
// on every write of the row, and an IN list there is built as a temporary b-tree each time (in
// the outbox benchmark a dispatch UPDATE then cost up to 0.45 ms instead of 16 µs, in malloc
// churn). A query can use a partial index only when its WHERE contains the index's condition
// as written.
const UNFINISHED_STATES: readonly DispatchState[] = ['received', 'acked', 'running'];
const FINISHED_STATES: readonly DispatchState[] = ['done', 'refused', 'expired'];
const anyStateOf = (states: readonly DispatchState[]): string => `(${states.map((s) => `state = '${s}'`).join(' OR ')})`;
const UNFINISHED = anyStateOf(UNFINISHED_STATES);
const FINISHED = anyStateOf(FINISHED_STATES);

const TABLES = `
CREATE TABLE IF NOT EXISTS dispatch (
  execution_id   TEXT PRIMARY KEY,
  instance_id    TEXT NOT NULL,
  item_json      TEXT NOT NULL,
  state          TEXT NOT NULL,
  pgid           INTEGER,
  proc_start     TEXT,
  accepted       INTEGER NOT NULL DEFAULT 0,
  received_at_ms INTEGER NOT NULL,
  updated_at_ms  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outgoing (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  kind            TEXT NOT NULL,
  execution_id    TEXT NOT NULL,
  item_json       TEXT NOT NULL,
  created_at_ms   INTEGER NOT NULL,
  confirmed_at_ms INTEGER,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER NOT NULL DEFAULT 0,
  UNIQUE (kind, execution_id)
);
CREATE TABLE IF NOT EXISTS log_outgoing (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  items_json    TEXT NOT NULL,
  items         INTEGER NOT NULL,
  data_bytes    INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL
);
`;

/**
 * Layout 1. Layout 0 had `dispatch_state (state)` and `outgoing_unconfirmed (confirmed_at_ms,
 * next_attempt_ms)`, which held every row the file keeps: prune walked all finished dispatches,
 * and the heartbeat's unconfirmed results walked every result through UNIQUE (kind, execution_id).
 * - `dispatch_unfinished`: what a restart recovers (R13), in arrival order; a job leaves it when it ends.
 * - `dispatch_finished`: what prune deletes, oldest first.
 * - `outgoing_pending`: unconfirmed items by next attempt (`confirmed_at_ms`, always NULL in it,
 *   makes it covering for the count and the next due time); an item leaves it when confirmed.
 * - `outgoing_confirmed`: what prune deletes, oldest first.
 * The old indexes are dropped on every open, not only once: a downgraded build recreates them.
 */
const INDEXES = `
DROP INDEX IF EXISTS dispatch_state;
DROP INDEX IF EXISTS outgoing_unconfirmed;
CREATE INDEX IF NOT EXISTS dispatch_unfinished ON dispatch (state, received_at_ms) WHERE ${UNFINISHED};
CREATE INDEX IF NOT EXISTS dispatch_finished ON dispatch (updated_at_ms) WHERE ${FINISHED};
CREATE INDEX IF NOT EXISTS outgoing_pending ON outgoing (next_attempt_ms, confirmed_at_ms) WHERE confirmed_at_ms IS NULL;
CREATE INDEX IF NOT EXISTS outgoing_confirmed ON outgoing (confirmed_at_ms) WHERE confirmed_at_ms IS NOT NULL;
`;

/**
 * Brings a file of any earlier layout to this one in one transaction (all or nothing), and does
 * nothing to a file already there: every step is idempotent DDL (layout 1 changed indexes,
 * layout 2 added `log_outgoing`; the older tables are unchanged since layout 0). `user_version`
 * only ever rises, so a file a newer build wrote keeps its number. An older build opening a
 * layout-2 file ignores `log_outgoing` (the output it holds waits for a newer build).
 */
function migrate(db: Database.Database): void {
  db.transaction(() => {
    db.exec(TABLES);
    db.exec(INDEXES);
    if ((db.pragma('user_version', { simple: true }) as number) < OUTBOX_LAYOUT_VERSION) db.pragma(`user_version = ${OUTBOX_LAYOUT_VERSION}`);
  }).immediate();
}

/** Every statement of the outbox, by name (the query-plan test reads them too). */
export const OUTBOX_SQL = {
  insertDispatch: `INSERT INTO dispatch (execution_id, instance_id, item_json, state, received_at_ms, updated_at_ms)
    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (execution_id) DO NOTHING`,
  getDispatch: 'SELECT * FROM dispatch WHERE execution_id = ?',
  setState: 'UPDATE dispatch SET state = ?, updated_at_ms = ? WHERE execution_id = ?',
  setProcess: 'UPDATE dispatch SET pgid = ?, proc_start = ?, updated_at_ms = ? WHERE execution_id = ?',
  setFinal: 'UPDATE dispatch SET state = ?, pgid = NULL, proc_start = NULL, updated_at_ms = ? WHERE execution_id = ?',
  setAccepted: 'UPDATE dispatch SET accepted = 1, updated_at_ms = ? WHERE execution_id = ?',
  unfinishedByState: `SELECT * FROM dispatch WHERE ${UNFINISHED} AND state = ? ORDER BY received_at_ms`,
  /** Finished states: a table scan (tests and diagnostics; the worker never asks). */
  anyByState: 'SELECT * FROM dispatch WHERE state = ? ORDER BY received_at_ms',
  insertOutgoing: `INSERT INTO outgoing (kind, execution_id, item_json, created_at_ms, next_attempt_ms) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (kind, execution_id) DO NOTHING`,
  // INDEXED BY: given `LIMIT ?`, SQLite would rather walk the whole table in id order.
  due: `SELECT id, kind, execution_id, item_json, attempts, created_at_ms FROM outgoing INDEXED BY outgoing_pending
    WHERE confirmed_at_ms IS NULL AND next_attempt_ms <= ? ORDER BY id LIMIT ?`,
  confirm: 'UPDATE outgoing SET confirmed_at_ms = ? WHERE id = ? AND confirmed_at_ms IS NULL',
  retryLater: 'UPDATE outgoing SET attempts = attempts + 1, next_attempt_ms = ? WHERE id = ?',
  hold: 'UPDATE outgoing SET next_attempt_ms = ? WHERE id = ? AND confirmed_at_ms IS NULL',
  releaseHolds: 'UPDATE outgoing SET next_attempt_ms = 0 WHERE confirmed_at_ms IS NULL AND next_attempt_ms > 0',
  unconfirmedCount: 'SELECT COUNT(*) AS n FROM outgoing WHERE confirmed_at_ms IS NULL',
  nextDue: `SELECT MIN(next_attempt_ms) AS t FROM outgoing WHERE confirmed_at_ms IS NULL AND next_attempt_ms < ${HELD_IN_MEMORY}`,
  // INDEXED BY: SQLite would rather walk every result ever written through UNIQUE (kind, execution_id).
  unconfirmedResults: `SELECT execution_id FROM outgoing INDEXED BY outgoing_pending WHERE confirmed_at_ms IS NULL AND kind = 'result'`,
  confirmedCount: 'SELECT kind, COUNT(*) AS n FROM outgoing WHERE confirmed_at_ms IS NOT NULL GROUP BY kind',
  pruneOutgoing: 'DELETE FROM outgoing WHERE confirmed_at_ms IS NOT NULL AND confirmed_at_ms < ?',
  // Every kind is named so that the lookup goes through UNIQUE (kind, execution_id), not through
  // each unconfirmed item (after a long RabbitMQ outage there are many).
  pruneDispatch: `DELETE FROM dispatch WHERE ${FINISHED} AND updated_at_ms < ?
    AND NOT EXISTS (SELECT 1 FROM outgoing o WHERE o.kind IN ('ack', 'refusal', 'result') AND o.execution_id = dispatch.execution_id
      AND o.confirmed_at_ms IS NULL)`,
  insertLog: 'INSERT INTO log_outgoing (items_json, items, data_bytes, created_at_ms) VALUES (?, ?, ?, ?)',
  logsAfter: 'SELECT id, items_json, items, data_bytes FROM log_outgoing WHERE id > ? ORDER BY id LIMIT ?',
  deleteLog: 'DELETE FROM log_outgoing WHERE id = ?',
  logBacklog: 'SELECT COUNT(*) AS n, COALESCE(SUM(data_bytes), 0) AS bytes FROM log_outgoing',
} as const;

interface DispatchRecord {
  execution_id: string;
  instance_id: string;
  item_json: string;
  state: DispatchState;
  pgid: number | null;
  proc_start: string | null;
  accepted: number;
  received_at_ms: number;
}

interface OutgoingRecord {
  id: number;
  kind: OutgoingKind;
  execution_id: string;
  item_json: string;
  attempts: number;
  created_at_ms: number;
}

function toDispatchRow(r: DispatchRecord): DispatchRow {
  return {
    executionId: r.execution_id,
    instanceId: r.instance_id,
    item: JSON.parse(r.item_json) as RecordedItem,
    state: r.state,
    pgid: r.pgid,
    procStart: r.proc_start,
    accepted: r.accepted === 1,
    receivedAtMs: r.received_at_ms,
  };
}

function toOutgoingRow(r: OutgoingRecord): OutgoingRow {
  return {
    id: r.id,
    kind: r.kind,
    executionId: r.execution_id,
    item: JSON.parse(r.item_json) as Record<string, unknown>,
    attempts: r.attempts,
    createdAtMs: r.created_at_ms,
  };
}

/** The outbox of one worker. */
export class Outbox {
  private readonly db: Database.Database;
  private readonly stmts: Record<keyof typeof OUTBOX_SQL, Database.Statement>;
  /**
   * One transaction wrapper, built once: `db.transaction(fn)` builds a new wrapper per call,
   * which at thousands of calls a second cost more than the statements inside.
   */
  private readonly inTransaction: (fn: () => unknown) => unknown;

  constructor(options: OutboxOptions) {
    if (options.file !== ':memory:') {
      mkdirSync(path.dirname(options.file), { recursive: true, mode: 0o700 });
      // Created 0600 before SQLite opens it: SQLite gives the WAL and -shm files the same mode.
      closeSync(openSync(options.file, 'a', 0o600));
      lockOutboxFiles(options.file);
    }
    this.db = new Database(options.file);
    this.db.pragma('journal_mode = WAL');
    if (options.file !== ':memory:') lockOutboxFiles(options.file);
    // NORMAL in WAL mode: a commit survives a process crash (kill -9); only an OS crash may lose
    // the last transactions, which the broker then handles as a lost worker.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    migrate(this.db);
    const db = this.db;
    this.stmts = Object.fromEntries(Object.entries(OUTBOX_SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Record<
      keyof typeof OUTBOX_SQL,
      Database.Statement
    >;
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * Records a received dispatch item. Returns false when its execution id is already known (a
   * redelivery or a duplicate publish): the caller must not run it again (R12).
   */
  recordDispatch(item: DispatchItem, nowMs: number, state: DispatchState = 'received'): boolean {
    const kept: RecordedItem = { executionId: item.executionId, instanceId: item.instanceId, taskName: item.taskName, traceId: item.traceId, attempt: item.attempt };
    const info = this.stmts.insertDispatch.run(item.executionId, item.instanceId, JSON.stringify(kept), state, nowMs, nowMs);
    return info.changes === 1;
  }

  /** Records several items in one transaction; returns those that are new. */
  recordDispatches(items: readonly DispatchItem[], nowMs: number): DispatchItem[] {
    return this.transaction(() => items.filter((item) => this.recordDispatch(item, nowMs)));
  }

  /** Runs `fn` in one transaction; inside one already, `fn` simply joins it (no savepoint). */
  transaction<T>(fn: () => T): T {
    return this.db.inTransaction ? fn() : (this.inTransaction(fn) as T);
  }

  /** One dispatch, or undefined. */
  dispatch(executionId: string): DispatchRow | undefined {
    const r = this.stmts.getDispatch.get(executionId) as DispatchRecord | undefined;
    return r === undefined ? undefined : toDispatchRow(r);
  }

  setState(executionId: string, state: DispatchState, nowMs: number): void {
    this.stmts.setState.run(state, nowMs, executionId);
  }

  /** Records the job's process group and its leader's start time (R13); null clears them. */
  setProcess(executionId: string, pgid: number | null, procStart: string | null, nowMs: number): void {
    this.stmts.setProcess.run(pgid, procStart, nowMs, executionId);
  }

  /** Marks an HTTP execution accepted for asynchronous completion (202, R15). */
  setAccepted(executionId: string, nowMs: number): void {
    this.stmts.setAccepted.run(nowMs, executionId);
  }

  /** Dispatches in a state, oldest first. */
  dispatchesIn(state: DispatchState): DispatchRow[] {
    const stmt = UNFINISHED_STATES.includes(state) ? this.stmts.unfinishedByState : this.stmts.anyByState;
    return (stmt.all(state) as DispatchRecord[]).map(toDispatchRow);
  }

  /**
   * Queues an outgoing item. Returns false when that execution already has one of this kind
   * (it is never sent twice).
   */
  enqueue(kind: OutgoingKind, executionId: string, item: Record<string, unknown>, nowMs: number): boolean {
    return this.enqueueRow(kind, executionId, item, nowMs, 0) !== null;
  }

  /**
   * Queues an outgoing item kept out of `due` until `heldUntilMs`, and returns it: the caller
   * hands it to the publisher, which sends it from memory instead of reading it back (a
   * restart releases the hold, so the item is still replayed). Null when that execution
   * already has an item of this kind.
   */
  enqueueRow(kind: OutgoingKind, executionId: string, item: Record<string, unknown>, nowMs: number, heldUntilMs: number): OutgoingRow | null {
    const info = this.stmts.insertOutgoing.run(kind, executionId, JSON.stringify(item), nowMs, heldUntilMs);
    if (info.changes !== 1) return null;
    return { id: Number(info.lastInsertRowid), kind, executionId, item, attempts: 0, createdAtMs: nowMs };
  }

  /**
   * Writes a final state and its outgoing item in one transaction, so a crash cannot leave a
   * finished job without its result (or a result without the state).
   */
  finish(executionId: string, state: DispatchState, kind: OutgoingKind, item: Record<string, unknown>, nowMs: number): boolean {
    return this.finishRow(executionId, state, kind, item, nowMs, 0) !== null;
  }

  /** `finish` with the item held until `heldUntilMs` and returned (see `enqueueRow`). */
  finishRow(executionId: string, state: DispatchState, kind: OutgoingKind, item: Record<string, unknown>, nowMs: number, heldUntilMs: number): OutgoingRow | null {
    return this.transaction(() => {
      this.stmts.setFinal.run(state, nowMs, executionId);
      return this.enqueueRow(kind, executionId, item, nowMs, heldUntilMs);
    });
  }

  /** Unconfirmed items whose next attempt is due, oldest first. */
  due(nowMs: number, limit: number): OutgoingRow[] {
    return (this.stmts.due.all(nowMs, limit) as OutgoingRecord[]).map(toOutgoingRow);
  }

  /** Marks items confirmed by RabbitMQ. */
  confirm(ids: readonly number[], nowMs: number): void {
    this.transaction(() => {
      for (const id of ids) this.stmts.confirm.run(nowMs, id);
    });
  }

  /**
   * Keeps items out of `due` until `untilMs` while their publish is in flight, so the
   * publisher does not re-read (and re-parse) everything it already sent on every pump.
   */
  hold(ids: readonly number[], untilMs: number): void {
    this.transaction(() => {
      for (const id of ids) this.stmts.hold.run(untilMs, id);
    });
  }

  /** Makes every unconfirmed item due now (a restart replays at once, whatever was held). */
  releaseHolds(): number {
    return this.stmts.releaseHolds.run().changes;
  }

  /** Pushes items back after a failed publish. */
  retryLater(ids: readonly number[], nextAttemptMs: number): void {
    this.transaction(() => {
      for (const id of ids) this.stmts.retryLater.run(nextAttemptMs, id);
    });
  }

  /** Items not yet confirmed. */
  unconfirmedCount(): number {
    return (this.stmts.unconfirmedCount.get() as { n: number }).n;
  }

  /** When the earliest unconfirmed item is due, or null when none is waiting (`HELD_IN_MEMORY` ones aside). */
  nextDueMs(): number | null {
    return (this.stmts.nextDue.get() as { t: number | null }).t;
  }

  /** Executions whose result is written but not yet confirmed: still part of the lease (R14). */
  unconfirmedResultIds(): string[] {
    return (this.stmts.unconfirmedResults.all() as Array<{ execution_id: string }>).map((r) => r.execution_id);
  }

  /** Confirmed items per kind (for tests and metrics). */
  confirmedCounts(): Record<OutgoingKind, number> {
    const out: Record<OutgoingKind, number> = { ack: 0, refusal: 0, result: 0 };
    for (const r of this.stmts.confirmedCount.all() as Array<{ kind: OutgoingKind; n: number }>) out[r.kind] = r.n;
    return out;
  }

  /**
   * Deletes confirmed items and finished dispatches older than `beforeMs`. Dispatch rows are
   * kept long enough to recognise any redelivery (the caller passes a day or more).
   */
  prune(beforeMs: number): { outgoing: number; dispatch: number } {
    return this.transaction(() => ({
      outgoing: this.stmts.pruneOutgoing.run(beforeMs).changes,
      dispatch: this.stmts.pruneDispatch.run(beforeMs).changes,
    }));
  }

  // ---- job output (log_outgoing) --------------------------------------------------------------

  /** Writes one row of `log` items (their JSON texts, comma-joined) and returns it. */
  enqueueLog(items: readonly string[], dataBytes: number, nowMs: number): LogRow {
    const itemsJson = items.join(',');
    const info = this.stmts.insertLog.run(itemsJson, items.length, dataBytes, nowMs);
    return { id: Number(info.lastInsertRowid), itemsJson, items: items.length, dataBytes };
  }

  /** Unshipped rows with an id above `afterId`, oldest first. */
  logsAfter(afterId: number, limit: number): LogRow[] {
    return (this.stmts.logsAfter.all(afterId, limit) as Array<{ id: number; items_json: string; items: number; data_bytes: number }>).map((r) => ({
      id: r.id,
      itemsJson: r.items_json,
      items: r.items,
      dataBytes: r.data_bytes,
    }));
  }

  /** Deletes rows whose publish RabbitMQ confirmed. */
  deleteLogs(ids: readonly number[]): void {
    this.transaction(() => {
      for (const id of ids) this.stmts.deleteLog.run(id);
    });
  }

  /** Rows not yet shipped, and their data bytes. */
  logBacklog(): { rows: number; bytes: number } {
    const r = this.stmts.logBacklog.get() as { n: number; bytes: number };
    return { rows: r.n, bytes: r.bytes };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
