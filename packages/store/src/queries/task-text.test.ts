/**
 * Task search's substring index (migration 0009, task-text.ts): a search through it finds
 * exactly what `LIKE '%q%'` on name or description finds, in name order, page by page; every
 * definition write keeps it, a delete takes its rows along, and the sweep re-indexes what a
 * previous build (R22) or a hand wrote without it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { parseTaskDefinitionOrThrow } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { loadMigrations } from '../migrate.js';
import { withTransaction } from '../pool.js';
import { splitSqlStatements } from '../sql-split.js';
import { reindexStaleTaskTexts } from './task-text.js';
import { deleteTask, getTask, insertTask, listTasks, replaceTask } from './tasks.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const def = (name: string, description: string, extra: Record<string, unknown> = {}) =>
  parseTaskDefinitionOrThrow({ name, description, schedule: { type: 'none' }, exec: { type: 'shell', command: ['true'] }, ...extra });

/** What the plain path answers: LIKE over the whole table, in name order. */
async function byLike(q: string): Promise<string[]> {
  const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const [rows] = await db.pool.query<RowDataPacket[]>('SELECT name FROM task WHERE name LIKE ? OR description LIKE ? ORDER BY name', [like, like]);
  return rows.map((r) => String(r.name));
}

const names = async (q: string, opts: { afterName?: string; limit?: number; teams?: string[] } = {}): Promise<string[]> =>
  (await listTasks(db.pool, { q, ...opts })).map((t) => t.definition.name);

describe('task search through the substring index', () => {
  beforeAll(async () => {
    const texts: Array<[string, string]> = [
      ['nightly-export', 'Exports the ledger every night'],
      ['nightly-report', 'the NIGHTLY report, in capitals'],
      ['hourly-sync', 'syncs the café menu'],
      ['pct-job', 'moves 100% of rows_with_underscores'],
      ['emoji-job', 'ships 📦 parcels to 🚀 rockets'],
      ['backslash-job', 'reads C:\\temp\\in'],
      ['ab', 'two letters'],
    ];
    for (let i = 0; i < 120; i += 1) texts.push([`bulk-${String(i).padStart(3, '0')}`, i % 3 === 0 ? 'a nightly batch' : `plain job ${i}`]);
    for (const [name, description] of texts) await insertTask(db.pool, def(name, description));
  });

  it('finds what LIKE finds, case-insensitively, in name and description', async () => {
    for (const q of ['nightly', 'NIGHT', 'ightl', 'ledger', 'café', 'CAFÉ', 'bulk-0', 'bulk-11', 'k-1', '100%', '% of', 'rows_with', 's_w', 'C:\\temp', '📦 parcels', 'to 🚀 r', 'two', 'zzz', 'nightlyx', 'ly-']) {
      expect(await names(q), q).toEqual(await byLike(q));
    }
  });

  it('weighs a term\'s trigrams once a minute: the same search again sends its SELECT only, with the same answer', async () => {
    const sent: string[] = [];
    const handle = { query: (sql: string, values?: unknown[]) => (sent.push(sql), db.pool.query(sql, values)) } as unknown as typeof db.pool;
    const search = async (q: string) => (await listTasks(handle, { q })).map((t) => t.definition.name);
    expect(await search('nightly')).toEqual(await byLike('nightly'));
    expect(sent.filter((s) => s.startsWith('EXPLAIN'))).toHaveLength(1);
    sent.length = 0;
    expect(await search('nightly')).toEqual(await byLike('nightly'));
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toMatch(/^EXPLAIN/);
    sent.length = 0;
    // Of its 6 weighed trigrams 'nig' (and more) are known: only the new ones are weighed.
    expect(await search('nightly-rep')).toEqual(await byLike('nightly-rep'));
    const weighed = sent.filter((s) => s.startsWith('EXPLAIN')).map((s) => s.split('UNION ALL').length);
    expect(weighed).toHaveLength(1);
    expect(weighed[0]).toBeLessThan(6);
  });

  it('pages in name order after a cursor, whatever the page size', async () => {
    for (const q of ['nightly', 'bulk-11', 'lk-0', 'plain job 1', 'ledger', 'zzz', '📦 parcels']) {
      const all = await byLike(q);
      for (const limit of [1, 5, 50]) {
        const pages: string[] = [];
        let afterName: string | undefined;
        for (;;) {
          const page = await names(q, { afterName, limit });
          pages.push(...page);
          if (page.length < limit) break;
          afterName = page[page.length - 1];
        }
        expect(pages, `${q} by ${limit}`).toEqual(all);
      }
    }
  });

  it('keeps the other filters (teams)', async () => {
    await db.pool.query("INSERT IGNORE INTO team (name) VALUES ('search-team')");
    await insertTask(db.pool, def('team-nightly', 'nightly, of another team', { team: 'search-team' }));
    expect(await names('nightly', { teams: ['search-team'] })).toEqual(['team-nightly']);
    expect(await names('nightly', { teams: ['default'] })).not.toContain('team-nightly');
  });

  it('follows an edit of the description and a delete', async () => {
    const before = await getTask(db.pool, 'hourly-sync');
    if (before === null) throw new Error('missing');
    await withTransaction(db.pool, (tx) => replaceTask(tx, def('hourly-sync', 'syncs the tea menu'), before.version));
    expect(await names('café')).toEqual([]);
    expect(await names('tea menu')).toEqual(['hourly-sync']);
    await deleteTask(db.pool, 'hourly-sync');
    expect(await names('tea menu')).toEqual([]);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM task_text_trigram WHERE task_name = 'hourly-sync'");
    expect(Number(rows[0]?.n)).toBe(0);
  });

  it('the sweep indexes a task an older build wrote without the index, and its later edits (R22)', async () => {
    // As the previous build writes: the task row alone.
    await db.pool.query(
      `INSERT INTO task (name, description, schedule, schedule_type, exec, params, tags, retry, misfire)
       SELECT 'old-build-task', 'written by the previous build', schedule, schedule_type, exec, params, tags, retry, misfire FROM task WHERE name = 'ab'`,
    );
    expect(await names('previous build')).toEqual([]);
    expect(await reindexStaleTaskTexts(db.pool, 500)).toBe(1);
    expect(await names('previous build')).toEqual(['old-build-task']);
    expect(await reindexStaleTaskTexts(db.pool, 500)).toBe(0);

    await db.pool.query("UPDATE task SET description = 'edited by hand', updated_at = updated_at + INTERVAL 1 SECOND WHERE name = 'old-build-task'");
    expect(await names('by hand')).toEqual([]);
    expect(await reindexStaleTaskTexts(db.pool, 500)).toBe(1);
    expect(await names('by hand')).toEqual(['old-build-task']);
    expect(await names('previous build')).toEqual([]);
  });

  it("migration 0009 fills, in SQL, the rows this build's writes give (textTrigrams)", async () => {
    const rowsNow = async (): Promise<string[]> => {
      const [rows] = await db.pool.query<RowDataPacket[]>('SELECT trigram, task_name FROM task_text_trigram');
      return rows.map((r) => `${String(r.task_name)} ${String(r.trigram).toLowerCase()}`).sort();
    };
    const written = await rowsNow();
    expect(written.length).toBeGreaterThan(1_000);
    await db.pool.query('DELETE FROM task_text_trigram');
    await db.pool.query('DELETE FROM task_text_indexed');
    const sql = (await loadMigrations()).find((m) => m.name === 'task_text_search')?.sql ?? '';
    const conn = await db.pool.getConnection();
    try {
      for (const statement of splitSqlStatements(sql)) await conn.query(statement);
    } finally {
      conn.destroy();
    }
    expect(await rowsNow()).toEqual(written);
    expect(await reindexStaleTaskTexts(db.pool, 500)).toBe(0);
  });

  it('on a schema before 0009 (R22) writes go on and a search reads the table with LIKE', async () => {
    await db.pool.query('RENAME TABLE task_text_trigram TO was_task_text_trigram, task_text_indexed TO was_task_text_indexed');
    try {
      await insertTask(db.pool, def('schema-eight-task', 'made on schema eight'));
      expect(await names('schema eight')).toEqual(['schema-eight-task']);
      expect(await names('nightly')).toEqual(await byLike('nightly'));
      expect(await reindexStaleTaskTexts(db.pool, 500)).toBe(0);
    } finally {
      await db.pool.query('RENAME TABLE was_task_text_trigram TO task_text_trigram, was_task_text_indexed TO task_text_indexed');
    }
    // Once migrated, the sweep indexes what was written meanwhile.
    expect(await reindexStaleTaskTexts(db.pool, 500)).toBe(1);
    expect(await names('schema eight')).toEqual(['schema-eight-task']);
  });
});
