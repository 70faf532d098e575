/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * Log streams (SSE) live no longer than their token and are capped per token (#45, DESIGN §11
 * "Noisy neighbours"): one more than `AX_LOG_STREAMS_PER_TOKEN` is refused with 429 naming the
 * limit (another token is not affected); a revocation through the API ends the token's streams
 * at once with `event: closed`; one made elsewhere (another process, straight in the database)
 * within the token check period.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertExecutions } from '@ax/store';
import { addToken, insertInstance, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let executionId: string;

beforeAll(async () => {
  t = await startTestApp({ logStreamsPerToken: 2, logStream: { pollMs: 200, pingMs: 300, incompleteGraceMs: 60_000, tokenCheckMs: 300 } });
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('talky') })).status).toBe(201);
  executionId = '0190b000-0000-7000-8000-000000000045';
  const instanceId = await insertInstance(t.pool, { task: 'talky', expected: '2026-11-20T01:00:00.000Z', bizDate: '2026-11-20', state: 'RUNNING', executionId, workerId: 'w1' });
  await insertExecutions(t.pool, [{ executionId, instanceId, attempt: 1, runNo: 1, workerId: 'w1' }]);
  await t.pool.query("UPDATE task_execution SET state = 'RUNNING' WHERE execution_id = ?", [executionId]);
});

afterAll(async () => {
  await t?.close();
});

/** An open stream of the (still running, so never ending) execution: its status, then its events until it ends. */
async function open(token: string): Promise<{ status: number; body: any; events: string[]; ended: Promise<void>; close: () => void }> {
  const controller = new AbortController();
  const res = await fetch(`${t.url}/api/v1/executions/${executionId}/log/stream`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const events: string[] = [];
  if (res.status !== 200) return { status: res.status, body: await res.json(), events, ended: Promise.resolve(), close: () => undefined };
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
        for (const m of text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)) if (!events.includes(m[0])) events.push(m[0]);
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return { status: 200, body: null, events, ended, close: () => controller.abort() };
}

/** Resolves when `p` settles within `ms`, else rejects naming `what`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms))]);
}

it('one stream more than the limit is refused with 429 naming it; other tokens, and the token once it closed one, may open', async () => {
  const token = await addToken(t.pool, 'streamer', 'viewer', ['*']);
  const other = await addToken(t.pool, 'bystander', 'viewer', ['*']);
  const first = await open(token);
  const second = await open(token);
  expect([first.status, second.status]).toEqual([200, 200]);
  const third = await open(token);
  expect(third.status).toBe(429);
  expect(third.body.error.code).toBe('RATE_LIMITED');
  expect(third.body.error.message).toContain('AX_LOG_STREAMS_PER_TOKEN=2');
  expect(third.body.error.details).toMatchObject({ limit: 'AX_LOG_STREAMS_PER_TOKEN', max: 2, open: 2 });
  const elsewhere = await open(other);
  expect(elsewhere.status).toBe(200);
  first.close();
  await first.ended;
  // the server sees the client leave a moment later
  let again = await open(token);
  for (let tries = 0; again.status === 429 && tries < 50; tries++) {
    await new Promise((r) => setTimeout(r, 50));
    again = await open(token);
  }
  expect(again.status).toBe(200);
  for (const s of [second, elsewhere, again]) s.close();
  await Promise.all([second.ended, elsewhere.ended, again.ended]);
});

it('revoking the token through the API ends its streams at once with event: closed; other tokens\' streams go on', async () => {
  const token = await addToken(t.pool, 'revoked-by-api', 'viewer', ['*']);
  const [{ id }] = (await t.pool.query<any[]>("SELECT id FROM api_token WHERE name = 'revoked-by-api'"))[0];
  const other = await addToken(t.pool, 'stays', 'viewer', ['*']);
  const stream = await open(token);
  const bystander = await open(other);
  expect([stream.status, bystander.status]).toEqual([200, 200]);
  expect((await t.call('DELETE', `/api/v1/tokens/${id}`)).status).toBe(204);
  await within(stream.ended, 3_000, 'the revoked token\'s stream ends');
  expect(stream.events).toEqual(['event: closed\ndata: {"reason":"TOKEN_REVOKED","message":"the token of this stream was revoked"}']);
  expect(await Promise.race([bystander.ended.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 700))])).toBe('open');
  bystander.close();
  await bystander.ended;
  // and the token opens nothing any more
  expect((await open(token)).status).toBe(401);
});

it('a token revoked elsewhere (another process, the database) ends its streams at the next token check', async () => {
  const token = await addToken(t.pool, 'revoked-elsewhere', 'viewer', ['*']);
  const stream = await open(token);
  expect(stream.status).toBe(200);
  await t.pool.query("UPDATE api_token SET revoked_at = CURRENT_TIMESTAMP(3) WHERE name = 'revoked-elsewhere'");
  await within(stream.ended, 5_000, 'the stream ends after the token check');
  expect(stream.events.at(-1)).toContain('"reason":"TOKEN_REVOKED"');
});
