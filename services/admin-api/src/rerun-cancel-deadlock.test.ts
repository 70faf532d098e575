/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * A route's transaction that loses a lock race is run again, not answered with a 500
 * (write-transaction.ts). The race CI met (stop 38): `POST /reruns/{batchId}/cancel` locks the
 * batch row, then the batch's instances; a scheduler or broker transaction holding one of
 * those instances and then asking for the batch row closes a deadlock, and InnoDB rolls the
 * cancel back. Here another connection plays that transaction, made heavier (100 rows changed)
 * so that InnoDB picks the cancel as the victim, as it did in CI.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('bf', { schedule: { type: 'cron', expr: '0 0,12 * * *' } }) });
  await t.pool.query('CREATE TABLE deadlock_pad (id INT PRIMARY KEY, n INT NOT NULL)');
  await t.pool.query('INSERT INTO deadlock_pad (id, n) VALUES ' + Array.from({ length: 100 }, (_, i) => `(${i + 1}, 0)`).join(', '));
});

afterAll(async () => {
  await t?.close();
});

/** Resolves once a transaction of this test's database waits for a lock in a statement matching `like`. */
async function lockWaitOf(like: string): Promise<void> {
  for (;;) {
    const [rows] = await t.pool.query<any[]>(
      `SELECT 1 FROM information_schema.innodb_trx x JOIN information_schema.processlist p ON p.id = x.trx_mysql_thread_id
        WHERE x.trx_state = 'LOCK WAIT' AND p.db = ? AND x.trx_query LIKE ?`,
      [t.db.name, like],
    );
    if (rows.length > 0) return;
    // innodb_trx is a cache, refreshed only when it was last read over 100 ms ago.
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

it('a cancel that deadlocks with a transaction moving the batch is run again and answers 200, all not-started instances canceled', async () => {
  const res = await t.call('POST', '/api/v1/reruns', { token: t.tokens.operator, body: { mode: 'backfill', task: 'bf', from: '2026-11-01', to: '2026-11-02', reason: 'history' } });
  expect(res.status).toBe(202);
  const batch: string = res.body.batchId;
  const [instances] = await t.pool.query<any[]>('SELECT id FROM task_instance WHERE rerun_batch_id = ? ORDER BY id', [batch]);
  expect(instances).toHaveLength(4);

  const other = await t.pool.getConnection();
  try {
    await other.beginTransaction();
    await other.query('UPDATE deadlock_pad SET n = n + 1');
    await other.query('SELECT id FROM task_instance WHERE id = ? FOR UPDATE', [instances[0].id]);
    const cancel = t.call('POST', `/api/v1/reruns/${batch}/cancel`, { token: t.tokens.operator, body: { reason: 'wrong range' } });
    await lockWaitOf('%rerun_batch_id%FOR UPDATE%'); // the cancel holds the batch row and waits for the instance
    // Closes the cycle; the cancel, the lighter side, is rolled back and this lock is granted.
    await other.query('SELECT id FROM rerun_batch WHERE id = ? FOR UPDATE', [batch]);
    await other.commit();
    const answer = await cancel;
    expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 200, body: { state: 'canceled', canceled: instances.map((i) => String(i.id)) } });
  } finally {
    other.release();
  }
  const [states] = await t.pool.query<any[]>('SELECT DISTINCT state FROM task_instance WHERE rerun_batch_id = ?', [batch]);
  expect(states.map((r) => r.state)).toEqual(['CANCELED']);
  const [audited] = await t.pool.query<any[]>("SELECT COUNT(*) AS n FROM audit_log WHERE action = 'rerun.cancel' AND target = ?", [`rerun:${batch}`]);
  expect(Number(audited[0].n)).toBe(1); // one committed attempt, one entry
});
