// #22 the sql executor against the real MariaDB/MySQL: a database and a user with a password
// made for this file (dropped afterwards), the datasource URL in the team's secrets folder; a
// statement and a script run to SUCCESS with their log, errors are one line naming the
// datasource, and a timed-out or canceled query is killed ON THE SERVER.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logItemSchema, type DispatchItem, type LogItem } from '@ax/core';
import { createTestDatabase, testServerUrl, waitFor, type TestDatabase } from '@ax/testing';
import { AttemptLog, noItems } from '../logs/attempt-log.js';
import { dispatchItem } from '../testing/fixtures.js';
import { reassemble } from '../testing/log-items.js';
import { createSqlExecutor } from './sql.js';
import type { ExecutionRequest } from './types.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-sql-'));
const secretsDir = path.join(dir, 'secrets');
const teamDir = path.join(secretsDir, 'default');
mkdirSync(teamDir, { recursive: true });

const suffix = randomBytes(6).toString('hex');
const user = `ax_sql_${suffix}`;
const password = `pw-${suffix}-Secr3t`;
const server = new URL(testServerUrl());
const host = server.hostname;
const port = server.port === '' ? 3306 : Number(server.port);

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  // A user of its own (with a password, to see it masked; it can KILL only its own queries).
  await db.pool.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', password]);
  await db.pool.query(`GRANT ALL PRIVILEGES ON \`${db.name}\`.* TO ?@?`, [user, '%']);
  await db.pool.query('CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, note TEXT NULL)');
  writeFileSync(path.join(teamDir, 'REPORTS_DB'), `mysql://${user}:${encodeURIComponent(password)}@${host}:${port}/${db.name}\n`);
  writeFileSync(path.join(teamDir, 'WRONG_PASSWORD'), `mysql://${user}:not-the-password@${host}:${port}/${db.name}\n`);
  writeFileSync(path.join(teamDir, 'POSTGRES'), `postgres://${user}:${password}@${host}:5432/x\n`);
  writeFileSync(path.join(teamDir, 'NOT_A_URL'), `host=${host} password=${password}\n`);
  writeFileSync(path.join(teamDir, 'DOWN'), `mysql://${user}:${password}@127.0.0.1:1/${db.name}\n`);
});
afterAll(async () => {
  try {
    await db.pool.query('DROP USER IF EXISTS ?@?', [user, '%']);
  } finally {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
});

const executor = createSqlExecutor({ outputTailBytes: 16_384, killGraceMs: 1_000, secretsDir });

function item(exec: { datasource: string; statement?: string; script?: string }, overrides: Partial<DispatchItem> = {}): DispatchItem {
  return dispatchItem({ exec: { type: 'sql', ...exec }, ...overrides });
}

/** A request whose output goes through a real attempt log; `done()` gives the shipped streams. */
function capture(dispatch: DispatchItem, extra: Partial<ExecutionRequest> = {}): { request: ExecutionRequest; done: () => { stdout: string; stderr: string } } {
  const log = new AttemptLog(dispatch, { maxBytes: 1_000_000 }, { onPending: () => undefined, shouldStopHead: () => false });
  return {
    request: { item: dispatch, deadlineMs: Date.now() + dispatch.timeoutSeconds * 1000, signal: new AbortController().signal, output: log, ...extra },
    done: () => {
      const items = noItems();
      log.takeChunks(items);
      log.end(items);
      const parsed: LogItem[] = items.items.map((text) => logItemSchema.parse(JSON.parse(text)));
      const back = reassemble(parsed, dispatch.executionId);
      return { stdout: back.streams.stdout.toString(), stderr: back.streams.stderr.toString() };
    },
  };
}

const shownUrl = (): string => `mysql://${user}:***@${host}:${port}/${db.name}`;

/** The server's threads running a query that contains `marker` (this lookup left out). */
async function runningWith(marker: string): Promise<RowDataPacket[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>(
    'SELECT ID, USER, COMMAND, INFO FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID()',
    [`%${marker}%`],
  );
  return rows;
}

/** The test user's connections still open on the server. */
async function connectionsOfUser(): Promise<RowDataPacket[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>('SELECT ID, COMMAND, INFO FROM information_schema.PROCESSLIST WHERE USER = ?', [user]);
  return rows;
}

describe('#22 sql executor', () => {
  it('runs one statement to SUCCESS: rows affected in the log and the data, the password never shown', async () => {
    const c = capture(item({ datasource: 'REPORTS_DB', statement: "INSERT INTO t (id, name) VALUES (1, 'one'), (2, 'two')" }));
    const out = await executor.run(c.request);
    const streams = c.done();
    expect(out).toMatchObject({ outcome: 'SUCCESS', exitCode: 0, data: { resultSets: 1, affectedRows: 2, rowsReturned: 0 } });
    expect(streams.stdout).toMatch(
      new RegExp(`^-- datasource REPORTS_DB: ${shownUrl().replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\n> INSERT INTO t \\(id, name\\) VALUES \\(1, 'one'\\), \\(2, 'two'\\)\n2 rows affected\n-- done in \\d+\\.\\d{3} s\n$`),
    );
    expect(streams.stderr).toBe('');
    expect(JSON.stringify({ out, streams })).not.toContain(password);
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT id, name FROM t ORDER BY id');
    expect(rows.map((r): unknown[] => [r.id, r.name])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
  });

  it('runs a script to SUCCESS: each result set logged, a SELECT as its first 100 rows, session variables set', async () => {
    const values = Array.from({ length: 148 }, (_, i) => `(${i + 3}, 'row-${i + 3}')`).join(', ');
    const script = [
      `INSERT INTO t (id, name) VALUES ${values};`,
      "UPDATE t SET name = UPPER(name), note = 'tab\\there' WHERE id <= 10;",
      'SELECT id, name, note FROM t ORDER BY id;',
      'SELECT @ax_biz_date AS biz, @ax_expected_time AS expected, JSON_VALUE(@ax_params, \'$.region\') AS region;',
    ].join('\n');
    const c = capture(item({ datasource: 'REPORTS_DB', script }, { params: { region: 'eu' } }));
    const out = await executor.run(c.request);
    const { stdout, stderr } = c.done();
    expect(out).toMatchObject({ outcome: 'SUCCESS', exitCode: 0, data: { resultSets: 4, affectedRows: 158, rowsReturned: 151 } });
    expect(stderr).toBe('');
    const lines = stdout.split('\n');
    expect(lines.slice(0, 6)).toEqual([`-- datasource REPORTS_DB: ${shownUrl()}`, '-- script', `> INSERT INTO t (id, name) VALUES ${values};`, expect.stringMatching(/^> UPDATE t/), expect.stringMatching(/^> SELECT id/), expect.stringMatching(/^> SELECT @ax_biz_date/)]);
    const at = lines.indexOf('-- result 1');
    expect(lines.slice(at, at + 7)).toEqual(['-- result 1', '148 rows affected', '-- result 2', '10 rows affected', '-- result 3', 'id\tname\tnote', '1\tONE\ttab\\there']);
    expect(lines).toContain('3\tROW-3\ttab\\there');
    expect(lines).toContain('11\trow-11\tNULL');
    expect(lines).toContain('100\trow-100\tNULL');
    expect(lines).not.toContain('101\trow-101\tNULL');
    expect(lines).toContain('(150 rows returned; the first 100 shown)');
    const last = lines.indexOf('-- result 4');
    expect(lines.slice(last, last + 4)).toEqual(['-- result 4', 'biz\texpected\tregion', '2026-12-01\t2026-12-01T02:00:00.000Z\teu', '(1 row returned)']);
    expect(out.outputTail).toContain('(150 rows returned; the first 100 shown)');
  });

  it('a SQL error is a FAILED attempt with one line naming the datasource (and the statement of a script)', async () => {
    // A statement is one statement: the server refuses a second one in it.
    const two = capture(item({ datasource: 'REPORTS_DB', statement: 'SELECT 1; DROP TABLE t' }));
    const twoOut = await executor.run(two.request);
    expect(twoOut.outcome).toBe('FAILED');
    expect(twoOut.error).toMatch(/^datasource "REPORTS_DB": ER_PARSE_ERROR \(1064\): You have an error in your SQL syntax; .+$/);
    expect(two.done().stderr).toBe(`${twoOut.error ?? ''}\n`);
    const [tables] = await db.pool.query<RowDataPacket[]>('SHOW TABLES LIKE ?', ['t']);
    expect(tables).toHaveLength(1);

    const script = await executor.run(capture(item({ datasource: 'REPORTS_DB', script: 'SELECT 1; SELECT * FROM no_such_table; SELECT 3;' })).request);
    expect(script).toMatchObject({
      outcome: 'FAILED',
      exitCode: null,
      error: `datasource "REPORTS_DB": statement 2 of the script failed: ER_NO_SUCH_TABLE (1146): Table '${db.name}.no_such_table' doesn't exist`,
    });
  });

  it('a missing secret, a bad URL, a wrong password or a server that does not answer: FAILED, one line naming the datasource, no secret', async () => {
    const cases: Array<[string, RegExp | string]> = [
      ['NOPE', 'SECRET_MISSING: secret "NOPE" is not in the secrets folder of team "default" (the datasource of this sql task)'],
      ['POSTGRES', 'datasource "POSTGRES": the URL\'s scheme is "postgres:", expected mysql: (mysql://user:password@host:port/database)'],
      ['NOT_A_URL', 'datasource "NOT_A_URL": the secret is not a URL; it must hold mysql://user:password@host:port/database'],
      ['WRONG_PASSWORD', /^datasource "WRONG_PASSWORD": cannot connect to [^ ]+: ER_ACCESS_DENIED_ERROR \(1045\): Access denied for user /],
      ['DOWN', /^datasource "DOWN": cannot connect to 127\.0\.0\.1:1: ECONNREFUSED: /],
    ];
    for (const [datasource, expected] of cases) {
      const c = capture(item({ datasource, statement: 'SELECT 1' }));
      const out = await executor.run(c.request);
      const streams = c.done();
      expect(out.outcome).toBe('FAILED');
      if (typeof expected === 'string') expect(out.error).toBe(expected);
      else expect(out.error).toMatch(expected);
      expect(out.error).not.toMatch(/\n|\bat .+:\d+:\d+/);
      expect(streams.stderr).toBe(`${out.error ?? ''}\n`);
      expect(JSON.stringify({ out, streams })).not.toMatch(new RegExp(`${password}|not-the-password`));
    }
  });

  it('timeout: SELECT SLEEP(30) with a 2 s timeout is killed on the server (KILL QUERY) and ends TIMEOUT; its connection is closed', async () => {
    const marker = `ax_sleep_${randomBytes(4).toString('hex')}`;
    const c = capture(item({ datasource: 'REPORTS_DB', statement: `SELECT SLEEP(30) AS ${marker}` }, { timeoutSeconds: 2 }));
    const running = executor.run(c.request);
    // The query does run on the server (so the check after the attempt can fail).
    await waitFor(async () => (await runningWith(marker)).length === 1, { description: 'SLEEP running on the server', timeoutMs: 5_000 });
    const out = await running;
    const streams = c.done();
    expect(out.outcome).toBe('TIMEOUT');
    expect(out.error).toMatch(/^timed out after 2 s; the query was canceled on the server \(KILL QUERY \d+\)$/);
    expect(streams.stderr).toMatch(/^the query was canceled on the server \(KILL QUERY \d+\)\n$/);
    expect(await runningWith(marker)).toEqual([]);
    await waitFor(async () => (await connectionsOfUser()).length === 0, { description: 'the query connection and the cancel connection closed', timeoutMs: 5_000 });
  });

  it('cancel: the running query is killed on the server and the attempt ends CANCELED', async () => {
    const marker = `ax_cancel_${randomBytes(4).toString('hex')}`;
    const controller = new AbortController();
    const c = capture(item({ datasource: 'REPORTS_DB', script: `DO 1; SELECT SLEEP(30) AS ${marker}; INSERT INTO t (id, name) VALUES (999, 'after');` }), { signal: controller.signal });
    const running = executor.run(c.request);
    await waitFor(async () => (await runningWith(marker)).length === 1, { description: 'SLEEP running on the server', timeoutMs: 5_000 });
    controller.abort('cancel');
    expect(await running).toMatchObject({ outcome: 'CANCELED', error: 'canceled' });
    expect(await runningWith(marker)).toEqual([]);
    await waitFor(async () => (await connectionsOfUser()).length === 0, { description: 'connections closed', timeoutMs: 5_000 });
    // The rest of the script did not run.
    const [rows] = await db.pool.query<RowDataPacket[]>('SELECT id FROM t WHERE id = 999');
    expect(rows).toEqual([]);
  });
});
