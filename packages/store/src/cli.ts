#!/usr/bin/env node
/**
 * `node packages/store/dist/cli.js migrate|status` (root script: `pnpm migrate`).
 *
 * Reads `AX_MYSQL_URL` (default `mysql://root@127.0.0.1:3306/ax`).
 * - `migrate`: creates the database if missing and applies pending migrations; one line per
 *   applied migration on stdout.
 * - `status`: schema version, supported range, applied and pending migrations.
 *
 * Exit codes: 0 done (status: up to date); 1 a migration or the schema is wrong (status: pending
 * or out of range); 2 bad configuration or the server cannot be reached. Errors are one line on
 * stderr, never a stack trace; the password of the URL is never printed.
 */
import { readFileSync } from 'node:fs';
import type { Pool } from 'mysql2/promise';
import { InvalidDatabaseUrlError, isConnectionError, toError } from './errors.js';
import type { MysqlDriverError } from './errors.js';
import { ensureDatabase, migrate, migrationStatus } from './migrate.js';
import { createPool } from './pool.js';
import { SCHEMA_VERSION_MAX, SCHEMA_VERSION_MIN } from './schema-version.js';
import { parseMysqlUrl, redactMysqlUrl } from './url.js';

const DEFAULT_URL = 'mysql://root@127.0.0.1:3306/ax';
const USAGE = 'usage: node packages/store/dist/cli.js migrate | status   (database: AX_MYSQL_URL)';

class UsageError extends Error {}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function describe(err: Error): string {
  const e = err as MysqlDriverError;
  const text = e.message !== '' ? e.message : (e.code ?? err.name);
  return text.replace(/\s+/g, ' ').trim();
}

function pad4(version: number): string {
  return String(version).padStart(4, '0');
}

async function runMigrate(url: string): Promise<number> {
  const { created, database } = await ensureDatabase(url);
  if (created) out(`created database ${database}`);
  const pool = createPool(url, { connectionLimit: 1 });
  try {
    const result = await migrate(pool, {
      onApplied: (m, ms) => out(`applied ${m.fileName.replace(/\.sql$/, '')} (${ms} ms)`),
    });
    if (result.applied.length === 0) {
      out(`database ${database} is up to date at schema version ${result.version ?? 'none'}`);
    }
    return 0;
  } finally {
    await pool.end();
  }
}

async function runStatus(url: string): Promise<number> {
  const pool: Pool = createPool(url, { connectionLimit: 1 });
  try {
    const s = await migrationStatus(pool);
    const inRange =
      s.version !== null && s.version >= SCHEMA_VERSION_MIN && s.version <= SCHEMA_VERSION_MAX;
    out(`database ${redactMysqlUrl(url)}`);
    out(
      `schema version ${s.version ?? 'none'} (this build supports ${SCHEMA_VERSION_MIN}–${SCHEMA_VERSION_MAX})` +
        (inRange ? '' : ': outside the supported range'),
    );
    for (const a of s.applied) {
      out(`applied ${pad4(a.version)}_${a.name} at ${a.appliedAt.toISOString()} (${a.executionMs} ms)`);
    }
    for (const f of s.changed) out(`CHANGED ${f.fileName} (checksum differs from the applied one)`);
    for (const f of s.pending) out(`pending ${f.fileName}`);
    return inRange && s.pending.length === 0 && s.changed.length === 0 ? 0 : 1;
  } finally {
    await pool.end();
  }
}

/**
 * AX_MYSQL_URL, or the content of the file AX_MYSQL_URL_FILE names (#44, as every service reads
 * a credential: @ax/kit config.ts), or the default.
 */
function mysqlUrlOf(env: NodeJS.ProcessEnv): string {
  const file = env['AX_MYSQL_URL_FILE']?.trim() ?? '';
  const value = env['AX_MYSQL_URL']?.trim() ?? '';
  if (file !== '') {
    if (value !== '') throw new UsageError('ax-store: set either AX_MYSQL_URL or AX_MYSQL_URL_FILE, not both');
    try {
      return readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new UsageError(`ax-store: AX_MYSQL_URL_FILE=${JSON.stringify(file)} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return value === '' ? DEFAULT_URL : value;
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    out(USAGE);
    return 0;
  }
  if (rest.length > 0 || (command !== 'migrate' && command !== 'status')) {
    throw new UsageError(USAGE);
  }
  const url = mysqlUrlOf(process.env);
  parseMysqlUrl(url); // a bad URL is a configuration error before anything connects
  return command === 'migrate' ? runMigrate(url) : runStatus(url);
}

/** Prints one line for a failure and returns the exit code. */
function report(command: string, thrown: unknown): number {
  const err = toError(thrown);
  const prefix = `ax-store ${command}:`;
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  if (err instanceof InvalidDatabaseUrlError) {
    process.stderr.write(`${prefix} invalid AX_MYSQL_URL: ${describe(err)}\n`);
    return 2;
  }
  if (isConnectionError(err)) {
    const url = mysqlUrlOf(process.env);
    process.stderr.write(`${prefix} cannot use MySQL at ${redactMysqlUrl(url)}: ${describe(err)}\n`);
    return 2;
  }
  process.stderr.write(`${prefix} ${describe(err)}\n`);
  return 1;
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (thrown: unknown) => {
    process.exitCode = report(argv[0] ?? '', thrown);
  },
);
