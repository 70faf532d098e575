// The outbox file's layout: a file written by an older build is migrated on open without losing
// a row, and every query the worker runs reads through an index (none walks the day of history
// the file keeps).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@ax/kit';
import { HELD_IN_MEMORY, OUTBOX_LAYOUT_VERSION, OUTBOX_SQL, Outbox, type DispatchState } from './outbox.js';
import { recoverAfterRestart } from './recovery.js';
import { dispatchItem } from './testing/fixtures.js';

/** The DDL of the builds before layouts were numbered (layout 0), verbatim. */
const LAYOUT_0 = `
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
CREATE INDEX IF NOT EXISTS dispatch_state ON dispatch (state);
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
CREATE INDEX IF NOT EXISTS outgoing_unconfirmed ON outgoing (confirmed_at_ms, next_attempt_ms);
`;

const NEW_INDEXES = ['dispatch_finished', 'dispatch_unfinished', 'outgoing_confirmed', 'outgoing_pending'];
/** A pid no process has (above the kernel's pid_max ceiling of 2^22). */
const NO_SUCH_PID = 4_194_400;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-outbox-schema-'));
  dirs.push(dir);
  return path.join(dir, 'outbox.db');
}

function indexesOf(file: string): { names: string[]; userVersion: number } {
  const db = new Database(file, { readonly: true });
  try {
    const names = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
    return { names, userVersion: db.pragma('user_version', { simple: true }) as number };
  } finally {
    db.close();
  }
}

/** Query plans of every outbox statement, from a second connection to the file. */
function plansOf(file: string): Record<keyof typeof OUTBOX_SQL, string> {
  const db = new Database(file);
  try {
    const plans = {} as Record<keyof typeof OUTBOX_SQL, string>;
    for (const [name, sql] of Object.entries(OUTBOX_SQL) as Array<[keyof typeof OUTBOX_SQL, string]>) {
      const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 1);
      plans[name] = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
    }
    return plans;
  } finally {
    db.close();
  }
}

/** What each statement must read through; `null` = allowed to scan (named with the reason). */
const EXPECTED_PLANS: Record<keyof typeof OUTBOX_SQL, RegExp[] | null> = {
  insertDispatch: [],
  getDispatch: [/^SEARCH dispatch USING INDEX sqlite_autoindex_dispatch_1 \(execution_id=\?\)$/],
  setState: [/^SEARCH dispatch USING INDEX sqlite_autoindex_dispatch_1 \(execution_id=\?\)$/],
  setProcess: [/^SEARCH dispatch USING INDEX sqlite_autoindex_dispatch_1 \(execution_id=\?\)$/],
  setFinal: [/^SEARCH dispatch USING INDEX sqlite_autoindex_dispatch_1 \(execution_id=\?\)$/],
  setAccepted: [/^SEARCH dispatch USING INDEX sqlite_autoindex_dispatch_1 \(execution_id=\?\)$/],
  // Recovery at start (R13): the unfinished ones only, already in arrival order.
  unfinishedByState: [/^SEARCH dispatch USING INDEX dispatch_unfinished \(state=\?\)$/],
  // Finished states are asked for by tests only.
  anyByState: null,
  insertOutgoing: [],
  due: [/^SEARCH outgoing USING INDEX outgoing_pending \(next_attempt_ms<\?\)/],
  confirm: [/^SEARCH outgoing USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
  retryLater: [/^SEARCH outgoing USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
  hold: [/^SEARCH outgoing USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
  releaseHolds: [/^SEARCH outgoing USING INDEX outgoing_pending \(next_attempt_ms>\?\)$/],
  unconfirmedCount: [/^SCAN outgoing USING COVERING INDEX outgoing_pending$/],
  nextDue: [/^SEARCH outgoing USING COVERING INDEX outgoing_pending \(next_attempt_ms<\?\)$/],
  // Every heartbeat (R14 lease).
  unconfirmedResults: [/^SCAN outgoing USING INDEX outgoing_pending$/],
  // Tests only.
  confirmedCount: null,
  pruneOutgoing: [/^SEARCH outgoing USING INDEX outgoing_confirmed \(confirmed_at_ms>\? AND confirmed_at_ms<\?\)$/],
  pruneDispatch: [
    /^SEARCH dispatch USING INDEX dispatch_finished \(updated_at_ms<\?\)/,
    /SEARCH o USING INDEX sqlite_autoindex_outgoing_1 \(kind=\? AND execution_id=\?\)$/,
  ],
  insertLog: [],
  // Replay of unshipped job output, a page at a time in id order.
  logsAfter: [/^SEARCH log_outgoing USING INTEGER PRIMARY KEY \(rowid>\?\)$/],
  deleteLog: [/^SEARCH log_outgoing USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
  // At start and while flushing at shutdown; the table holds only unshipped rows (deleted once confirmed).
  logBacklog: [/^SCAN log_outgoing$/],
};

function expectIndexedPlans(file: string): void {
  const plans = plansOf(file);
  for (const [name, expected] of Object.entries(EXPECTED_PLANS) as Array<[keyof typeof OUTBOX_SQL, RegExp[] | null]>) {
    if (expected === null) continue;
    if (expected.length === 0) expect(plans[name], name).toBe('');
    for (const pattern of expected) expect(plans[name], name).toMatch(pattern);
  }
}

interface OldRow {
  state: DispatchState;
  pgid?: number;
  procStart?: string;
  accepted?: boolean;
  atMs: number;
}

/** Writes a layout-0 file the way the old build did, with rows in every state. */
function writeLayout0File(file: string): { ids: Record<string, string>; outgoingIds: Record<string, number> } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(LAYOUT_0);
  const rows: Record<string, OldRow> = {
    received: { state: 'received', atMs: 1_000 },
    acked: { state: 'acked', atMs: 1_100 },
    running: { state: 'running', pgid: NO_SUCH_PID, procStart: '123', atMs: 1_200 },
    accepted: { state: 'running', accepted: true, atMs: 1_250 },
    done: { state: 'done', atMs: 1_300 },
    doneUnconfirmed: { state: 'done', atMs: 1_350 },
    refused: { state: 'refused', atMs: 1_400 },
    expired: { state: 'expired', atMs: 1_500 },
    recentDone: { state: 'done', atMs: 50_000 },
  };
  const ids: Record<string, string> = {};
  const insertDispatch = db.prepare(
    `INSERT INTO dispatch (execution_id, instance_id, item_json, state, pgid, proc_start, accepted, received_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const [name, row] of Object.entries(rows)) {
    const item = dispatchItem({ taskName: `old-${name}` });
    ids[name] = item.executionId;
    insertDispatch.run(item.executionId, item.instanceId, JSON.stringify(item), row.state, row.pgid ?? null, row.procStart ?? null, row.accepted ? 1 : 0, row.atMs, row.atMs);
  }
  const insertOutgoing = db.prepare(
    `INSERT INTO outgoing (kind, execution_id, item_json, created_at_ms, confirmed_at_ms, attempts, next_attempt_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const outgoing: Array<[string, string, string, number, number | null, number, number]> = [
    // Confirmed long ago (pruned), and recently (kept).
    ['oldResult', 'result', ids.done!, 1_300, 1_301, 0, HELD_IN_MEMORY],
    ['recentResult', 'result', ids.recentDone!, 50_000, 50_001, 0, HELD_IN_MEMORY],
    // Unconfirmed: an ACK an older build wrote (due now), a refusal backed off until 9,000, a
    // result held in memory by the process that crashed, one of each due at once.
    ['ackRunning', 'ack', ids.running!, 1_200, null, 0, 0],
    ['refusal', 'refusal', ids.refused!, 1_400, null, 2, 9_000],
    ['expiredRefusal', 'refusal', ids.expired!, 1_500, null, 0, 0],
    ['heldResult', 'result', ids.doneUnconfirmed!, 1_350, null, 0, HELD_IN_MEMORY],
    ['acceptedResult', 'result', ids.accepted!, 1_250, null, 1, 2_000],
  ];
  const outgoingIds: Record<string, number> = {};
  for (const [name, kind, executionId, createdAtMs, confirmedAtMs, attempts, nextAttemptMs] of outgoing) {
    const info = insertOutgoing.run(kind, executionId, JSON.stringify({ executionId, kind, name }), createdAtMs, confirmedAtMs, attempts, nextAttemptMs);
    outgoingIds[name] = Number(info.lastInsertRowid);
  }
  db.close();
  return { ids, outgoingIds };
}

describe('outbox layout', () => {
  it('a new file gets the current layout, and every query the worker runs reads through an index', () => {
    const file = tempFile();
    new Outbox({ file }).close();
    expect(indexesOf(file)).toEqual({ names: NEW_INDEXES, userVersion: OUTBOX_LAYOUT_VERSION });
    expectIndexedPlans(file);
    // Every statement has its expectation (a new one must say how it is read).
    expect(Object.keys(EXPECTED_PLANS).sort()).toEqual(Object.keys(OUTBOX_SQL).sort());
  });

  it('R12 R13 R14 a file of the old layout is migrated on open: no row is lost and every query still works', async () => {
    const file = tempFile();
    const { ids, outgoingIds } = writeLayout0File(file);
    expect(indexesOf(file)).toEqual({ names: ['dispatch_state', 'outgoing_unconfirmed'], userVersion: 0 });

    const outbox = new Outbox({ file });
    expect(indexesOf(file)).toEqual({ names: NEW_INDEXES, userVersion: OUTBOX_LAYOUT_VERSION });
    expectIndexedPlans(file);

    // Dispatches, in every state, with everything recorded about them.
    const inState = (state: DispatchState): string[] => outbox.dispatchesIn(state).map((r) => r.executionId);
    expect(inState('received')).toEqual([ids.received]);
    expect(inState('acked')).toEqual([ids.acked]);
    expect(inState('running')).toEqual([ids.running, ids.accepted]);
    expect(inState('done')).toEqual([ids.done, ids.doneUnconfirmed, ids.recentDone]);
    expect(inState('refused')).toEqual([ids.refused]);
    expect(inState('expired')).toEqual([ids.expired]);
    expect(outbox.dispatch(ids.running!)).toMatchObject({ state: 'running', pgid: NO_SUCH_PID, procStart: '123', accepted: false, receivedAtMs: 1_200 });
    expect(outbox.dispatch(ids.accepted!)).toMatchObject({ accepted: true, item: { taskName: 'old-accepted' } });
    // R12: every known execution id is still known.
    for (const executionId of Object.values(ids)) expect(outbox.recordDispatch(dispatchItem({ executionId }), 60_000)).toBe(false);
    expect(outbox.enqueue('result', ids.doneUnconfirmed!, {}, 60_000)).toBe(false);

    // Unconfirmed items: counted, leased (R14), due in id order, backed off and held as written.
    expect(outbox.unconfirmedCount()).toBe(5);
    expect(outbox.unconfirmedResultIds().sort()).toEqual([ids.doneUnconfirmed, ids.accepted].sort());
    expect(outbox.nextDueMs()).toBe(0);
    expect(outbox.due(1_000, 10).map((r) => r.id)).toEqual([outgoingIds.ackRunning, outgoingIds.expiredRefusal]);
    expect(outbox.due(9_000, 10).map((r) => r.id)).toEqual([outgoingIds.ackRunning, outgoingIds.refusal, outgoingIds.expiredRefusal, outgoingIds.acceptedResult]);
    expect(outbox.due(9_000, 10)[1]).toMatchObject({ kind: 'refusal', executionId: ids.refused, attempts: 2, createdAtMs: 1_400, item: { name: 'refusal' } });
    expect(outbox.confirmedCounts()).toEqual({ ack: 0, refusal: 0, result: 2 });

    // Prune: the old confirmed result and its finished dispatch go; a finished dispatch whose
    // result is unconfirmed stays, and so does everything unfinished or recent.
    expect(outbox.prune(10_000)).toEqual({ outgoing: 1, dispatch: 1 });
    expect(outbox.dispatch(ids.done!)).toBeUndefined();
    expect(outbox.dispatch(ids.doneUnconfirmed!)?.state).toBe('done');
    expect(outbox.dispatch(ids.recentDone!)?.state).toBe('done');
    outbox.close();

    // Opening again changes nothing (idempotent), and the restart does what a restart does.
    const again = new Outbox({ file });
    expect(indexesOf(file)).toEqual({ names: NEW_INDEXES, userVersion: OUTBOX_LAYOUT_VERSION });
    expect(again.unconfirmedCount()).toBe(5);
    expect(again.releaseHolds()).toBe(3); // the backed-off refusal and result, and the held result
    expect(again.nextDueMs()).toBe(0);
    expect(await recoverAfterRestart(again, silentLogger(), 100)).toBe(3); // received, acked, running; not the accepted one (R15)
    expect([...inStateOf(again, 'received'), ...inStateOf(again, 'acked'), ...inStateOf(again, 'running')]).toEqual([ids.accepted]);
    const results = new Map(again.due(Number.MAX_SAFE_INTEGER, 100).filter((r) => r.kind === 'result').map((r) => [r.executionId, r.item]));
    for (const name of ['received', 'acked', 'running']) expect(results.get(ids[name]!)).toMatchObject({ outcome: 'WORKER_RESTART' });
    expect(again.unconfirmedCount()).toBe(8);
    again.close();
  });

  it('DESIGN §11 a file of layout 1 (before job output) gets the log table on open; its rows and the new table work', () => {
    const file = tempFile();
    const outbox = new Outbox({ file });
    const item = dispatchItem();
    expect(outbox.recordDispatch(item, 1_000, 'running')).toBe(true);
    expect(outbox.enqueue('result', item.executionId, { executionId: item.executionId }, 1_000)).toBe(true);
    outbox.close();
    // What a layout-1 build left: no log_outgoing, user_version 1.
    const db = new Database(file);
    db.exec('DROP TABLE log_outgoing');
    db.pragma('user_version = 1');
    db.close();

    const again = new Outbox({ file });
    expect(indexesOf(file)).toEqual({ names: NEW_INDEXES, userVersion: OUTBOX_LAYOUT_VERSION });
    expect(OUTBOX_LAYOUT_VERSION).toBe(2);
    expectIndexedPlans(file);
    expect(again.dispatch(item.executionId)?.state).toBe('running');
    expect(again.unconfirmedResultIds()).toEqual([item.executionId]);
    expect(again.logBacklog()).toEqual({ rows: 0, bytes: 0 });
    const row = again.enqueueLog(['{"part":"end"}', '{"part":"end"}'], 0, 2_000);
    const big = again.enqueueLog(['{"part":"chunk"}'], 300, 2_000);
    expect(again.logsAfter(0, 10)).toEqual([row, big]);
    expect(again.logsAfter(row.id, 10)).toEqual([big]);
    expect(again.logBacklog()).toEqual({ rows: 2, bytes: 300 });
    again.deleteLogs([row.id, big.id]);
    expect(again.logBacklog()).toEqual({ rows: 0, bytes: 0 });
    again.close();
  });

  it('the old indexes a downgraded build recreated are dropped again at the next open', () => {
    const file = tempFile();
    new Outbox({ file }).close();
    const db = new Database(file);
    db.exec(LAYOUT_0); // what the old build runs at its open
    db.close();
    expect(indexesOf(file).names).toEqual([...NEW_INDEXES, 'dispatch_state', 'outgoing_unconfirmed'].sort());
    new Outbox({ file }).close();
    expect(indexesOf(file)).toEqual({ names: NEW_INDEXES, userVersion: OUTBOX_LAYOUT_VERSION });
  });

  it('a file a newer build numbered higher keeps its number', () => {
    const file = tempFile();
    new Outbox({ file }).close();
    const db = new Database(file);
    db.pragma(`user_version = ${OUTBOX_LAYOUT_VERSION + 1}`);
    db.close();
    new Outbox({ file }).close();
    expect(indexesOf(file).userVersion).toBe(OUTBOX_LAYOUT_VERSION + 1);
  });
});

function inStateOf(outbox: Outbox, state: DispatchState): string[] {
  return outbox.dispatchesIn(state).map((r) => r.executionId);
}
