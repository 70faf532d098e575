/**
 * Tests of the compiled CLI (`packages/store/dist/cli.js`, what `pnpm migrate` runs), in real
 * processes. The dist is the one built by `pnpm build` (the root `test` script builds first);
 * when it is missing or older than a source file, `beforeAll` rebuilds it with
 * `tsc -p packages/store` (project mode: it does not rebuild other packages).
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ax/testing's index (owned by another author) does not export these fixtures yet; switch
// to `from '@ax/testing'` once it does.
// eslint-disable-next-line import-x/no-relative-packages
import { createTestDatabase, testServerUrl } from '../../testing/src/database.js';
// eslint-disable-next-line import-x/no-relative-packages
import type { TestDatabase } from '../../testing/src/database.js';
// eslint-disable-next-line import-x/no-relative-packages
import { findFreePort } from '../../testing/src/mariadb-server.js';
import { loadMigrations } from './migrate.js';
import { SCHEMA_VERSION_MAX, SCHEMA_VERSION_MIN } from './schema-version.js';
import { createPool } from './pool.js';
import { showCreateTables } from './queries/schema.js';
import { withDatabase } from './url.js';

const storeDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const cliPath = join(storeDir, 'dist', 'cli.js');

async function mtime(path: string): Promise<number> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return 0;
  }
}

/** Rebuilds packages/store/dist when any non-test source is newer than its output. */
async function ensureBuiltStore(): Promise<void> {
  const srcDir = join(storeDir, 'src');
  const sources = (await readdir(srcDir, { recursive: true })).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  );
  let stale = false;
  for (const f of sources) {
    const out = join(storeDir, 'dist', f.replace(/\.ts$/, '.js'));
    if ((await mtime(out)) < (await mtime(join(srcDir, f)))) stale = true;
  }
  if (!stale) return;
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [tsc, '-p', join(storeDir, 'tsconfig.json')], (err, stdout) => {
      if (err === null) resolve();
      else reject(new Error(`building @ax/store failed:\n${stdout}`));
    });
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: readonly string[], mysqlUrl: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: { ...process.env, AX_MYSQL_URL: mysqlUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every table's CREATE TABLE plus the seed rows of the migration. */
async function schemaSnapshot(pool: Pool): Promise<Record<string, string>> {
  const snapshot = await showCreateTables(pool);
  const [flags] = await pool.query<RowDataPacket[]>('SELECT name, value FROM system_flag ORDER BY name');
  const [dag] = await pool.query<RowDataPacket[]>('SELECT id, dag_version FROM dag_lock');
  snapshot['#seed'] = JSON.stringify({ flags, dag });
  return snapshot;
}

beforeAll(async () => {
  await ensureBuiltStore();
}, 120_000);

describe('cli migrate from two processes at once', () => {
  const name = `ax_test_${randomBytes(8).toString('hex')}`;
  const url = withDatabase(testServerUrl(), name);
  let reference: TestDatabase;

  beforeAll(async () => {
    reference = await createTestDatabase(); // migrated in-process, for comparison
  });

  afterAll(async () => {
    const admin = createPool(testServerUrl(), { database: null, connectionLimit: 1 });
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeId(name)}`);
    } finally {
      await admin.end();
    }
    await reference.drop();
  });

  it('both exit 0, the database is created, every migration applied exactly once, same schema', async () => {
    const [a, b] = await Promise.all([runCli(['migrate'], url), runCli(['migrate'], url)]);
    expect(a, a.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(b, b.stderr).toMatchObject({ code: 0, stderr: '' });
    const lines = `${a.stdout}${b.stdout}`.split('\n').filter((l) => l !== '');
    const files = await loadMigrations();
    expect(lines.filter((l) => l.startsWith('applied ')).map((l) => l.replace(/ \(\d+ ms\)$/, ''))).toEqual(
      files.map((f) => `applied ${f.fileName.replace(/\.sql$/, '')}`),
    );
    expect(lines).toContain(`database ${name} is up to date at schema version ${SCHEMA_VERSION_MAX}`);
    expect(lines.filter((l) => l === `created database ${name}`)).toHaveLength(1);

    const pool = createPool(url, { connectionLimit: 1 });
    try {
      const [rows] = await pool.query<RowDataPacket[]>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => Number(r['version']))).toEqual((await loadMigrations()).map((f) => f.version));
      expect(await schemaSnapshot(pool)).toEqual(await schemaSnapshot(reference.pool));
    } finally {
      await pool.end();
    }
  });

  it('status reports the applied migration and exits 0', async () => {
    const run = await runCli(['status'], url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`schema version ${SCHEMA_VERSION_MAX} (this build supports ${SCHEMA_VERSION_MIN}–${SCHEMA_VERSION_MAX})`);
    for (const f of await loadMigrations()) {
      expect(run.stdout).toMatch(new RegExp(`^applied ${f.fileName.replace(/\.sql$/, '')} at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z`, 'm'));
    }
    expect(run.stdout).not.toContain('pending');
  });
});

describe('cli errors', () => {
  it('migrate against an unreachable port prints one line naming the URL without password, exit 2', async () => {
    const port = await findFreePort(); // nobody listens there once the probe closed
    const run = await runCli(['migrate'], `mysql://root:hunter2@127.0.0.1:${port}/ax`);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `ax-store migrate: cannot use MySQL at mysql://root:***@127.0.0.1:${port}/ax: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(run.stderr).not.toContain('hunter2');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('a malformed AX_MYSQL_URL and an unknown command are one line and exit 2', async () => {
    const bad = await runCli(['migrate'], 'postgres://u:pw@h/ax');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('ax-store migrate: invalid AX_MYSQL_URL: postgres://u:***@h/ax: scheme must be mysql://\n');
    const unknown = await runCli(['frobnicate'], 'mysql://root@127.0.0.1:3306/ax');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('status of a database that was never migrated exits 1 and lists the pending file', async () => {
    const db = await createTestDatabase({ migrate: false });
    try {
      const run = await runCli(['status'], db.url);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toContain(`schema version none (this build supports ${SCHEMA_VERSION_MIN}–${SCHEMA_VERSION_MAX}): outside the supported range`);
      for (const f of await loadMigrations()) expect(run.stdout).toContain(`pending ${f.fileName}`);
    } finally {
      await db.drop();
    }
  });
});
