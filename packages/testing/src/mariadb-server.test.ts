import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort, MariaDbStartError, startMariaDb } from './mariadb-server.js';
import type { MariaDbServer } from './mariadb-server.js';

function connect(server: MariaDbServer, connectTimeout = 5_000): Promise<mysql.Connection> {
  return mysql.createConnection({ host: '127.0.0.1', port: server.port, user: 'root', connectTimeout });
}

async function scalar(server: MariaDbServer, sql: string): Promise<unknown> {
  const conn = await connect(server);
  try {
    const [rows] = await conn.query<RowDataPacket[]>(sql);
    return rows[0] === undefined ? undefined : Object.values(rows[0])[0];
  } finally {
    await conn.end();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startMariaDb', () => {
  let server: MariaDbServer;

  beforeAll(async () => {
    server = await startMariaDb({ args: ['--default-time-zone=+08:00'] });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('answers on its own port as root without password, with the extra args applied', async () => {
    expect(server.url).toBe(`mysql://root@127.0.0.1:${server.port}`);
    expect(server.port).not.toBe(3306);
    expect(await scalar(server, 'SELECT @@global.time_zone')).toBe('+08:00');
    expect(await scalar(server, 'SELECT @@port')).toBe(server.port);
    // Its temporary files stay in its own folder, out of the shared /tmp (a CI failure: a
    // bootstrap's temporary table file vanished there).
    const dataDir = String(await scalar(server, 'SELECT @@datadir'));
    expect(await scalar(server, 'SELECT @@tmpdir')).toBe(join(dataDir, '..', 'tmp'));
  });

  it('keeps its data across stop() and start() on the same datadir and port', async () => {
    const conn = await connect(server);
    await conn.query('CREATE DATABASE drill');
    await conn.query('CREATE TABLE drill.t (id INT PRIMARY KEY) ENGINE=InnoDB');
    await conn.query('INSERT INTO drill.t VALUES (1)');
    await conn.end();
    const port = server.port;
    const pid = server.pid as number;

    await server.stop();
    expect(server.pid).toBeNull();
    expect(alive(pid)).toBe(false);
    await expect(connect(server, 1_000)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    await server.start();
    expect(server.port).toBe(port);
    expect(await scalar(server, 'SELECT COUNT(*) FROM drill.t')).toBe(1);
  });

  it('recovers committed data after kill() (SIGKILL, a crash) and start()', async () => {
    const conn = await connect(server);
    await conn.query('INSERT INTO drill.t VALUES (2)'); // autocommit: durable before the kill
    await conn.end();
    const pid = server.pid as number;
    await server.kill();
    expect(alive(pid)).toBe(false);
    await server.start();
    expect(await scalar(server, 'SELECT COUNT(*) FROM drill.t')).toBe(2);
  });

  it('can be frozen with SIGSTOP and thawed with SIGCONT', async () => {
    await server.kill('SIGSTOP');
    await expect(connect(server, 500)).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    await server.kill('SIGCONT');
    expect(await scalar(server, 'SELECT 1')).toBe(1);
  });

  it('refuses a second start() while running', async () => {
    await expect(server.start()).rejects.toBeInstanceOf(MariaDbStartError);
  });

  it('cleanup() ends the process and removes the temp dir', async () => {
    const extra = await startMariaDb();
    const pid = extra.pid as number;
    expect(existsSync(extra.dir)).toBe(true);
    await extra.cleanup();
    expect(alive(pid)).toBe(false);
    expect(existsSync(extra.dir)).toBe(false);
    await expect(extra.cleanup()).resolves.toBeUndefined();
  });

  it('keepDir: installs once, keeps the data after cleanup(), and starts on it again', async () => {
    const keepDir = await mkdtemp(join(tmpdir(), 'ax-mariadb-kept-'));
    try {
      const first = await startMariaDb({ keepDir });
      expect(first.dir).toBe(keepDir);
      const conn = await connect(first);
      await conn.query('CREATE DATABASE kept');
      await conn.query('CREATE TABLE kept.t (v INT)');
      await conn.query('INSERT INTO kept.t VALUES (42)');
      await conn.end();
      await first.cleanup();
      expect(existsSync(join(keepDir, 'data'))).toBe(true);

      const again = await startMariaDb({ keepDir });
      try {
        expect(await scalar(again, 'SELECT v FROM kept.t')).toBe(42);
      } finally {
        await again.cleanup();
      }
    } finally {
      await rm(keepDir, { recursive: true, force: true });
    }
  });

  it('fails with the error log when mariadbd cannot start, and leaves nothing behind', async () => {
    const port = await findFreePort();
    const parentDir = await mkdtemp(join(tmpdir(), 'ax-mariadb-parent-'));
    const error = await startMariaDb({ port, parentDir, args: ['--ax-no-such-option'] }).then(
      async (s) => {
        await s.cleanup();
        throw new Error('should not start');
      },
      (err: unknown) => err as Error,
    );
    expect(error).toBeInstanceOf(MariaDbStartError);
    expect(error.message).toMatch(/unknown option '--ax-no-such-option'/);
    expect(await readdir(parentDir)).toEqual([]); // its temp dir is gone
    await rmdir(parentDir);
  });
});
