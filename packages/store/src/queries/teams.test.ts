/**
 * 0003_teams on a database with data (existing tasks move into `default`, existing tokens act for
 * every team, live duplicate token names are made unique), and the guards it adds: a task's team
 * must exist, a team owning tasks cannot be deleted, a live token name is unique while a revoked
 * one's name can be reused. Real MySQL.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { DEFAULT_MIGRATIONS_DIR, migrate } from '../migrate.js';
import { getTask, insertTask, TeamMissingError } from './tasks.js';
import { deleteTeam, insertTeam, TeamInUseError } from './teams.js';
import { insertApiToken, listApiTokens, revokeApiToken, TokenNameTakenError } from './tokens.js';

let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  // The schema before teams (versions 1 and 2), with data in it.
  dir = await mkdtemp(join(tmpdir(), 'ax-migrations-'));
  const shipped = fileURLToPath(DEFAULT_MIGRATIONS_DIR);
  for (const f of ['0001_init.sql', '0002_lean_instance_indexes.sql']) await copyFile(join(shipped, f), join(dir, f));
  await migrate(db.pool, { migrationsDir: dir });
  await db.pool.query(
    `INSERT INTO task (name, schedule, schedule_type, exec, params, tags, retry, misfire)
     VALUES ('old_task', '{"type":"none"}', 'none', '{"type":"shell","command":["true"]}', '{}', '[]', '{"max":0}', '{"policy":"skip"}')`,
  );
  for (const [name, hash] of [['ci', 'a'], ['ci', 'b'], ['ops', 'c']] as const) {
    await db.pool.query('INSERT INTO api_token (name, role, token_hash) VALUES (?, ?, ?)', [name, 'viewer', hash.repeat(64)]);
  }
  await migrate(db.pool);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db.drop();
});

describe('0003_teams on existing data', () => {
  it("moves existing tasks into team default and gives existing tokens ['*']; older live duplicate names get #<id>", async () => {
    expect((await getTask(db.pool, 'old_task'))?.definition.team).toBe('default');
    const tokens = await listApiTokens(db.pool, { limit: 10 });
    expect(tokens.map((t) => t.teams)).toEqual([['*'], ['*'], ['*']]);
    const names = tokens.map((t) => t.name).sort();
    const older = tokens.find((t) => t.name.startsWith('ci#'));
    expect(names).toEqual(['ci', `ci#${older?.id ?? '?'}`, 'ops']);
    const [teams] = await db.pool.query<RowDataPacket[]>('SELECT name, key_version, max_running FROM team');
    expect(teams).toEqual([{ name: 'default', key_version: 1, max_running: null }]);
  });
});

describe('the guards of 0003', () => {
  const def = (name: string, team: string) =>
    parseTaskDefinitionOrThrow({ name, team, schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] } });

  it('refuses a task of a missing team, and the delete of a team that owns tasks', async () => {
    await expect(insertTask(db.pool, def('t_missing', 'nope'))).rejects.toBeInstanceOf(TeamMissingError);
    await insertTeam(db.pool, { name: 'data', description: '', maxRunning: null });
    await insertTask(db.pool, def('t_data', 'data'));
    await expect(deleteTeam(db.pool, 'data')).rejects.toBeInstanceOf(TeamInUseError);
    await db.pool.query("DELETE FROM task WHERE name = 't_data'");
    expect(await deleteTeam(db.pool, 'data')).toBe(true);
  });

  it("refuses a second live token of a name; a revoked token's name can be taken again", async () => {
    const id = await insertApiToken(db.pool, { name: 'deploy-bot', role: 'operator', tokenHash: 'd'.repeat(64), teams: ['default'] });
    await expect(insertApiToken(db.pool, { name: 'deploy-bot', role: 'viewer', tokenHash: 'e'.repeat(64) })).rejects.toBeInstanceOf(TokenNameTakenError);
    expect(await revokeApiToken(db.pool, id)).toBe(true);
    await expect(insertApiToken(db.pool, { name: 'deploy-bot', role: 'viewer', tokenHash: 'e'.repeat(64) })).resolves.toMatch(/^\d+$/);
    const within = await listApiTokens(db.pool, { limit: 50, withinTeams: ['default'] });
    expect(within.map((t) => t.name)).toEqual(['deploy-bot']);
  });
});
