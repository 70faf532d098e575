/**
 * The `sql` executor (issue #22): one `statement`, or a `script` of several, on MySQL/MariaDB
 * through mysql2. The datasource is a secret of the task's team (`exec.datasource`, read like a
 * secretRef: secrets.ts) holding `mysql://user:password@host:port/database` (sql-datasource.ts).
 *
 * - One connection per attempt; a `statement` runs with `multipleStatements` off (the server
 *   refuses a second statement in it), a `script` with it on. Before it the session variables
 *   `@ax_biz_date`, `@ax_expected_time`, `@ax_execution_id` and `@ax_params` (JSON) are set with
 *   placeholders: SQL never gets template values pasted in. `LOAD DATA LOCAL` is off (the
 *   server could otherwise read the worker's files).
 * - At the deadline or on a cancel the running query is canceled ON THE SERVER: a second
 *   connection sends `KILL QUERY <threadId>`; a query still running `killGraceMs` later gets
 *   `KILL <threadId>` (the connection). Then both connections are closed and the attempt ends
 *   TIMEOUT / CANCELED (WORKER_RESTART on shutdown), as a shell job's does.
 * - The job's output (stdout): the datasource with its password as `***`, the statement, per
 *   result set `N rows affected` or the column names and the first 100 rows as tab-separated
 *   text and the row count; a failure's one-line error goes to stderr. The secret's value and
 *   its password are masked wherever output or errors could show them.
 * - A missing secret (`SECRET_MISSING: …`), a value that is not such a URL, a connection or
 *   SQL error: a FAILED attempt with one line naming the datasource, no stack trace.
 *
 * No process group is recorded (nothing runs on the worker): a worker that dies mid-query
 * leaves the query to the server, which ends it when it notices the connection gone.
 */
import { createConnection, type Connection, type ConnectionOptions, type FieldPacket, type ResultSetHeader } from 'mysql2';
import type { SqlExec } from '@ax/core';
import { OutputTail } from './output-tail.js';
import { maskOutcome, NO_SECRETS, secretMask, type SecretMask } from './secret-mask.js';
import { readSecret, SecretMissingError } from './secrets.js';
import { DatasourceError, parseDatasourceUrl, type Datasource } from './sql-datasource.js';
import { formatAffected, formatReturned, formatRow, formatSqlError, formatStatement, SQL_LOG_ROWS } from './sql-output.js';
import { stoppedOutcome, type ExecutionOutcome, type ExecutionRequest, type Executor } from './types.js';

/** Options of the sql executor. */
export interface SqlExecutorOptions {
  /** Bytes of output kept (`AX_OUTPUT_TAIL_BYTES`). */
  readonly outputTailBytes: number;
  /**
   * `AX_SECRETS_DIR`: the datasource is read from `<secretsDir>/<team>/<datasource>` of the
   * task's team (secrets.ts); default none — every sql task fails with SECRET_MISSING.
   */
  readonly secretsDir?: string | undefined;
  /**
   * How long a query has to end after `KILL QUERY` before its connection is killed, and how
   * long the cancel connection may take to connect; default 5000 ms (`AX_WORKER_KILL_GRACE_MS`).
   */
  readonly killGraceMs?: number;
  /** Longest wait for the connection to the datasource; default 10000 ms (never past the deadline). */
  readonly connectTimeoutMs?: number;
}

/** What the query connection did, once it is over. */
type Work = { ok: true; resultSets: number; affectedRows: number; rowsReturned: number } | { ok: false; error: string };

/** A write to the attempt's output and its tail. */
type Write = (stream: 'stdout' | 'stderr', text: string) => void;

/** True when `promise` settles within `ms` (the timer is cleared either way). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

function connectionOptions(ds: Datasource, extra: ConnectionOptions): ConnectionOptions {
  return {
    host: ds.host,
    port: ds.port,
    user: ds.user,
    password: ds.password,
    ...(ds.database === undefined ? {} : { database: ds.database }),
    ...(ds.ssl ? { ssl: { rejectUnauthorized: true } } : {}),
    charset: 'utf8mb4',
    // Values as the server sends them: no time-zone or float conversion in the log.
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    // No LOAD DATA LOCAL INFILE: the server must not read the worker's files.
    flags: ['-LOCAL_FILES'],
    ...extra,
  };
}

function connect(connection: Connection): Promise<void> {
  return new Promise((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())));
}

function query(connection: Connection, sql: string, values: unknown[]): Promise<void> {
  return new Promise((resolve, reject) => connection.query(sql, values, (error) => (error ? reject(error) : resolve())));
}

/** Ends a connection politely when it can, else destroys it; never throws, at most `ms`. */
async function close(connection: Connection, ms: number): Promise<void> {
  let polite = false;
  const ended = new Promise<void>((resolve) => {
    try {
      connection.end((error) => {
        polite = !error;
        resolve();
      });
    } catch {
      // end() on a connection that is already closed: destroyed below.
      resolve();
    }
  });
  if (!(await settlesWithin(ended, ms)) || !polite) connection.destroy();
}

/**
 * Runs `sql` on `connection` (as an event stream, so a large SELECT is counted, not held),
 * writing each result set to the log as it arrives.
 */
function runQuery(connection: Connection, sql: string, script: boolean, write: Write): Promise<Work> {
  return new Promise((resolve) => {
    let resultSets = 0;
    let affectedRows = 0;
    let rowsReturned = 0;
    let current: { rows: number } | undefined;
    let failed: string | undefined;
    const closeResultSet = (): void => {
      if (current !== undefined) write('stdout', formatReturned(current.rows));
      current = undefined;
    };
    const q = connection.query({ sql, rowsAsArray: true });
    q.on('fields', (fields: FieldPacket[] | undefined) => {
      closeResultSet();
      resultSets += 1;
      if (script) write('stdout', `-- result ${resultSets}\n`);
      if (fields !== undefined) {
        current = { rows: 0 };
        write('stdout', formatRow(fields.map((field) => field.name)));
      }
    });
    q.on('result', (row: unknown) => {
      if (Array.isArray(row)) {
        rowsReturned += 1;
        if (current === undefined) current = { rows: 0 };
        current.rows += 1;
        if (current.rows <= SQL_LOG_ROWS) write('stdout', formatRow(row));
        return;
      }
      const header = row as Partial<ResultSetHeader>;
      affectedRows += header.affectedRows ?? 0;
      write('stdout', formatAffected(header));
    });
    q.on('error', (error: unknown) => {
      closeResultSet();
      const where = script ? `statement ${resultSets + 1} of the script failed: ` : '';
      failed ??= `${where}${formatSqlError(error)}`;
    });
    q.on('end', () => {
      closeResultSet();
      resolve(failed === undefined ? { ok: true, resultSets, affectedRows, rowsReturned } : { ok: false, error: failed });
    });
  });
}

/** Creates the sql executor. */
export function createSqlExecutor(options: SqlExecutorOptions): Executor {
  const graceMs = options.killGraceMs ?? 5_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;

  const attempt = async (request: ExecutionRequest, tail: OutputTail, setMask: (mask: SecretMask) => void): Promise<ExecutionOutcome> => {
    const { item } = request;
    if (item.exec.type !== 'sql') throw new Error(`sql executor got a ${item.exec.type} exec`);
    const exec: SqlExec = item.exec;
    const name = exec.datasource;
    let ds: Datasource;
    try {
      ds = parseDatasourceUrl(name, await readSecret(name, { dir: options.secretsDir, team: item.team }));
    } catch (error) {
      if (error instanceof SecretMissingError) return { outcome: 'FAILED', exitCode: null, error: `${error.message} (the datasource of this sql task)` };
      if (error instanceof DatasourceError) return { outcome: 'FAILED', exitCode: null, error: error.message };
      return { outcome: 'FAILED', exitCode: null, error: `datasource ${JSON.stringify(name)}: ${(error as Error).message}` };
    }
    const mask = secretMask(ds.secrets);
    setMask(mask);
    request.output?.useMask(mask);
    const write: Write = (stream, text) => {
      tail.push(Buffer.from(text, 'utf8'));
      request.output?.write(stream, text);
    };
    const script = exec.script !== undefined;
    const sql = exec.script ?? exec.statement ?? '';
    const target = `${ds.host}:${ds.port}`;
    write('stdout', `-- datasource ${name}: ${ds.display}\n`);

    if (request.signal.aborted) return { ...stoppedOutcome(request.signal.reason), exitCode: null };
    const remainingMs = (): number => Math.max(1, request.deadlineMs - Date.now());
    const connection = createConnection(
      connectionOptions(ds, { multipleStatements: script, connectTimeout: Math.min(connectTimeoutMs, remainingMs()) }),
    );
    // A fatal error after the run (the server closing the socket) must not be unhandled.
    connection.on('error', () => undefined);
    let connected = false;
    let stopping = false;
    let started = 0;

    // The stop: the deadline, or the request's signal (cancel, shutdown).
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<'timeout' | 'abort'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), remainingMs());
      onAbort = () => resolve('abort');
      request.signal.addEventListener('abort', onAbort, { once: true });
    });

    const work = (async (): Promise<Work> => {
      try {
        await connect(connection);
        connected = true;
        if (stopping) return { ok: false, error: 'stopped' };
        await query(connection, 'SET @ax_biz_date = ?, @ax_expected_time = ?, @ax_execution_id = ?, @ax_params = ?', [
          item.bizDate,
          item.expectedTime,
          item.executionId,
          JSON.stringify(item.params),
        ]);
        if (stopping) return { ok: false, error: 'stopped' };
        write('stdout', formatStatement(script ? 'script' : 'statement', sql));
        started = Date.now();
        return await runQuery(connection, sql, script, write);
      } catch (error) {
        const message = formatSqlError(error);
        return { ok: false, error: connected ? message : `cannot connect to ${target}: ${message}` };
      }
    })();

    /** KILL QUERY from a second connection (then KILL the connection if the query lingers). */
    const cancelOnServer = async (): Promise<string> => {
      const threadId = connection.threadId;
      if (!connected || threadId === null || !Number.isSafeInteger(threadId)) {
        connection.destroy();
        return 'the connection was closed before the query started';
      }
      const killer = createConnection(connectionOptions(ds, { connectTimeout: graceMs }));
      killer.on('error', () => undefined);
      let said: string;
      try {
        await connect(killer);
        await query(killer, 'KILL QUERY ?', [threadId]);
        said = `the query was canceled on the server (KILL QUERY ${threadId})`;
        if (!(await settlesWithin(work, graceMs))) {
          await query(killer, 'KILL ?', [threadId]);
          said = `the query was canceled on the server (KILL QUERY ${threadId}, then KILL ${threadId}: it did not end within ${graceMs} ms)`;
        }
      } catch (error) {
        said = `the query could not be canceled on the server (KILL QUERY ${threadId}): ${formatSqlError(error)}; its connection was closed`;
      } finally {
        await close(killer, graceMs);
      }
      return said;
    };

    let outcome: ExecutionOutcome;
    const first = await Promise.race([work.then((result) => ({ kind: 'done' as const, result })), stop.then((why) => ({ kind: 'stop' as const, why }))]);
    clearTimeout(timer);
    if (onAbort !== undefined) request.signal.removeEventListener('abort', onAbort);
    if (first.kind === 'stop') {
      stopping = true;
      const said = await cancelOnServer();
      await settlesWithin(work, graceMs);
      connection.destroy();
      write('stderr', `${said}\n`);
      outcome =
        first.why === 'timeout'
          ? { outcome: 'TIMEOUT', exitCode: null, error: `timed out after ${item.timeoutSeconds} s; ${said}` }
          : { ...stoppedOutcome(request.signal.reason), exitCode: null };
    } else {
      await close(connection, graceMs);
      const { result } = first;
      if (result.ok) {
        write('stdout', `-- done in ${((Date.now() - started) / 1000).toFixed(3)} s\n`);
        outcome = {
          outcome: 'SUCCESS',
          exitCode: 0,
          data: { resultSets: result.resultSets, affectedRows: result.affectedRows, rowsReturned: result.rowsReturned },
        };
      } else {
        outcome = { outcome: 'FAILED', exitCode: null, error: `datasource ${JSON.stringify(name)}: ${result.error}` };
      }
    }
    return outcome;
  };

  return {
    async run(request: ExecutionRequest): Promise<ExecutionOutcome> {
      const tail = new OutputTail(options.outputTailBytes);
      let mask: SecretMask = NO_SECRETS;
      const outcome = await attempt(request, tail, (m) => (mask = m));
      const masked = maskOutcome(mask, outcome);
      if (masked.error !== undefined && outcome.outcome === 'FAILED') {
        tail.push(Buffer.from(`${masked.error}\n`, 'utf8'));
        request.output?.write('stderr', `${masked.error}\n`);
      }
      return { ...masked, outputTail: tail.text(mask), outputTruncated: tail.truncated };
    },
  };
}
