/**
 * The logs consumer (issue #19) on real RabbitMQ and MySQL: a published `log` message is
 * stored, byte for byte; one whose envelope is invalid is dead-lettered with its reason, a bad
 * item alone is refused and its message's other items stored (#45); items of another
 * worker's or an unknown execution are dropped; a retryable store error is retried, not lost.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEAD_SOURCE_HEADER, type BusMessage } from '@ax/bus';
import { encodeMessage, type LogChunkItem, type LogMessage } from '@ax/core';
import { createMetrics, silentLogger } from '@ax/kit';
import { insertExecutions, readLogLayout, readLogPage, logViewState } from '@ax/store';
import { waitFor } from '@ax/testing';
import type { BrokerContext } from './context.js';
import { createLogChunkHandler } from './log-chunks.js';
import { createBrokerMetrics } from './metrics.js';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('logs consumer', () => {
  let h: BrokerHarness;
  let seq = 0;

  beforeAll(async () => {
    h = await startBrokerHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  /** A RUNNING instance with an execution on `workerId` (no broker loop touches it). */
  async function execution(workerId: string): Promise<{ instanceId: string; executionId: string }> {
    seq += 1;
    const executionId = `0190a000-0000-7000-8000-${String(seq).padStart(12, '0')}`;
    const [r] = await h.db.pool.query<RowDataPacket[] & { insertId: number }>(
      `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, worker_id, current_execution_id)
       VALUES (1, ?, NOW(3), CURDATE(), 'manual', 'RUNNING', NOW(3), '{}', ?, ?)`,
      [`logs-${seq}`, workerId, executionId],
    );
    const instanceId = String((r as unknown as { insertId: number }).insertId);
    await insertExecutions(h.db.pool, [{ executionId, instanceId, attempt: 1, runNo: 1, workerId }]);
    return { instanceId, executionId };
  }

  function chunkItems(e: { instanceId: string; executionId: string }, out: Buffer, size: number): LogChunkItem[] {
    const items: LogChunkItem[] = [];
    for (let o = 0; o < out.length; o += size) {
      items.push({ part: 'chunk', ...e, stream: 'stdout', offset: o, allOffset: o, data: out.subarray(o, o + size).toString('base64') });
    }
    return items;
  }

  const publish = (body: Buffer): Promise<void> => h.peerBus.publish(h.peerBus.topology.logsExchange, '', body);

  it('stores a published log message; a redelivered copy changes nothing', async () => {
    const e = await execution('w-logs');
    const out = Buffer.concat([Buffer.from('hello from the job\n'.repeat(3_000)), randomBytes(20_000)]);
    const items = chunkItems(e, out, 16_000);
    const message: LogMessage = { v: 1, kind: 'log', workerId: 'w-logs', items: [...items, { part: 'end', ...e, stdoutBytes: out.length, stderrBytes: 0, truncated: false }] };
    await publish(encodeMessage(message));
    await publish(encodeMessage({ ...message, items: items.slice(1, 3) })); // redelivery of part of it
    const state = await waitFor(async () => {
      const s = logViewState(await readLogLayout(h.db.pool, e.executionId), 'stdout');
      return s.stored ? s : null;
    }, { description: 'the output stored' });
    expect(state.size).toBe(out.length);
    const page = await readLogPage(h.db.pool, e.executionId, 'stdout', 0, 4 * 1_048_576);
    expect(sha(page.data)).toBe(sha(out));
    await waitFor(async () => ((await h.bus.queueDepth(h.bus.topology.logsQueue))?.messageCount === 0 ? true : null), { description: 'the logs queue drained' });
  });

  it('dead-letters a log message whose envelope is invalid, with its reason', async () => {
    const e = await execution('w-logs');
    const bad = { v: 1, kind: 'log', workerId: '', items: [{ part: 'chunk', ...e, stream: 'stdout', offset: 0, allOffset: 0, data: 'aGk=' }] };
    await publish(Buffer.from(JSON.stringify(bad)));
    const rows = await waitFor(async () => {
      const [r] = await h.db.pool.query<RowDataPacket[]>("SELECT source_queue, reason FROM dead_letter WHERE source_queue = ? AND reason LIKE '%workerId%'", [h.bus.topology.logsQueue]);
      return r.length > 0 ? r : null;
    }, { description: 'the dead letter stored' });
    expect(String(rows[0]?.reason)).toMatch(/workerId/);
    const [chunks] = await h.db.pool.query<RowDataPacket[]>('SELECT 1 FROM job_log_chunk WHERE execution_id = ?', [e.executionId]);
    expect(chunks).toHaveLength(0);
  });

  it('#45 refuses a bad item alone: the other items of its message are stored, the bad one counted, nothing dead-lettered', async () => {
    const good = await execution('w-items');
    const poisoned = await execution('w-items');
    const metrics = createMetrics({ service: 'broker', defaultMetrics: false });
    const ctx = { ...h.broker.context, metrics: createBrokerMetrics(metrics), logger: silentLogger() } as BrokerContext;
    const handler = createLogChunkHandler(ctx, metrics);
    const out = Buffer.from('kept\n');
    const body = {
      v: 1,
      kind: 'log',
      workerId: 'w-items',
      items: [
        { part: 'chunk', ...poisoned, stream: 'stdout', offset: 0, allOffset: 0, data: 'not base64!' },
        ...chunkItems(good, out, 100),
        { part: 'end', ...good, stdoutBytes: out.length, stderrBytes: 0, truncated: false },
      ],
    };
    const [before] = await h.db.pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM dead_letter');
    const delivery: BusMessage = { body: Buffer.from(JSON.stringify(body)), redelivered: false, headers: {}, routingKey: '', exchange: h.bus.topology.logsExchange, queue: h.bus.topology.logsQueue, signal: new AbortController().signal };
    await expect(handler(delivery)).resolves.toBe('ack');
    expect((await readLogPage(h.db.pool, good.executionId, 'stdout', 0, 1_000)).data.equals(out)).toBe(true);
    const [chunks] = await h.db.pool.query<RowDataPacket[]>('SELECT 1 FROM job_log_chunk WHERE execution_id = ?', [poisoned.executionId]);
    expect(chunks).toHaveLength(0);
    expect(await metrics.registry.getSingleMetricAsString('ax_refused_items_total')).toMatch(/kind="log",reason="schema"[^}]*} 1/);
    const [after] = await h.db.pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM dead_letter');
    expect(after[0]?.n).toBe(before[0]?.n);
    // A message of bad items only is taken off the queue all the same.
    await expect(handler({ ...delivery, body: Buffer.from(JSON.stringify({ ...body, items: [body.items[0]] })) })).resolves.toBe('ack');
  });

  it("drops items of another worker's or an unknown execution, and stores the rest", async () => {
    const mine = await execution('w-a');
    const theirs = await execution('w-b');
    const out = Buffer.from('mine\n');
    const message: LogMessage = {
      v: 1,
      kind: 'log',
      workerId: 'w-a',
      items: [
        ...chunkItems(theirs, Buffer.from('forged\n'), 100),
        ...chunkItems({ instanceId: '999999', executionId: '0190a000-0000-7000-8000-ffffffffffff' }, Buffer.from('nobody\n'), 100),
        ...chunkItems(mine, out, 100),
      ],
    };
    await publish(encodeMessage(message));
    await waitFor(async () => (logViewState(await readLogLayout(h.db.pool, mine.executionId), 'stdout').size === out.length ? true : null), { description: 'own output stored' });
    const [rows] = await h.db.pool.query<RowDataPacket[]>('SELECT execution_id FROM job_log_chunk WHERE execution_id IN (?, ?)', [theirs.executionId, '0190a000-0000-7000-8000-ffffffffffff']);
    expect(rows).toHaveLength(0);
  });

  it('holds a message through retryable store errors and stores it once the store answers', async () => {
    const e = await execution('w-retry');
    let failures = 3;
    // The pool as the consumer sees it: the first appends fail with a deadlock (retryable).
    const flaky = new Proxy(h.db.pool, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return (sql: string, values?: unknown[]) => {
            if (sql.includes('INSERT INTO job_log_chunk') && failures > 0) {
              failures -= 1;
              return Promise.reject(Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213, code: 'ER_LOCK_DEADLOCK' }));
            }
            return target.query(sql, values);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const ctx = { ...h.broker.context, pool: flaky, logger: silentLogger() } as BrokerContext;
    const handler = createLogChunkHandler(ctx, createMetrics({ service: 'broker', defaultMetrics: false }), { initialDelayMs: 20, maxDelayMs: 50 });
    const out = Buffer.from('survives a deadlock\n');
    const body = encodeMessage({ v: 1, kind: 'log', workerId: 'w-retry', items: chunkItems(e, out, 100) });
    const delivery: BusMessage = { body, redelivered: false, headers: {}, routingKey: '', exchange: h.bus.topology.logsExchange, queue: h.bus.topology.logsQueue, signal: new AbortController().signal };
    const started = Date.now();
    await expect(handler(delivery)).resolves.toBe('ack');
    expect(failures).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(30); // backed off between attempts, no hot loop
    expect((await readLogPage(h.db.pool, e.executionId, 'stdout', 0, 1_000)).data.equals(out)).toBe(true);
    // a stopping consumer gives the delivery back instead of waiting
    failures = 100;
    const stop = new AbortController();
    const pending = handler({ ...delivery, signal: stop.signal });
    setTimeout(() => stop.abort(), 100);
    await expect(pending).resolves.toBe('release');
  });

  it('names the logs queue as the source of its dead letters', async () => {
    await publish(Buffer.from('{"v":1,"kind":"ack","workerId":"w","items":[]}'));
    const rows = await waitFor(async () => {
      const [r] = await h.db.pool.query<RowDataPacket[]>("SELECT headers FROM dead_letter WHERE reason LIKE '%logs queue%' OR reason LIKE '%items%'");
      return r.length > 0 ? r : null;
    }, { description: 'dead letter of a wrong kind' });
    const headers = (typeof rows[0]?.headers === 'string' ? JSON.parse(rows[0].headers) : rows[0]?.headers) as Record<string, unknown>;
    expect(headers[DEAD_SOURCE_HEADER]).toBe(h.bus.topology.logsQueue);
  });
});
