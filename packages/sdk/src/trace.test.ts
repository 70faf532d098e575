import { describe, expect, it } from 'vitest';
import { createExecutorHandler } from './handler.js';
import { signedHeaders } from './signature.js';
import { parseTraceparent } from './trace.js';
import type { ExecutionContext } from './handler.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent (#48)', () => {
  it('reads the header ax sends', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, parentSpanId: SPAN, sampled: true, traceparent: `00-${TRACE}-${SPAN}-01` });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.sampled).toBe(false);
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01-later`)?.traceId).toBe(TRACE);
  });

  it.each([
    undefined,
    '',
    `00-${TRACE}-${SPAN}`,
    `00-${TRACE}-${SPAN}-01-more`,
    `ff-${TRACE}-${SPAN}-01`,
    `00-${'0'.repeat(32)}-${SPAN}-01`,
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE.toUpperCase()}-${SPAN}-01`,
    `00-${TRACE}-${SPAN}-0g`,
  ])('ignores %s (no context: the handler runs outside any trace)', (value) => {
    expect(parseTraceparent(value)).toBeNull();
  });
});

describe('ctx.trace (#48)', () => {
  const KEYS = { team: 'payments', keys: { 1: 'a'.repeat(64) } };
  const call = async (extraHeaders: Record<string, string>) => {
    const seen: ExecutionContext[] = [];
    const handler = createExecutorHandler({ keys: KEYS, handler: (ctx) => void seen.push(ctx) });
    const rawBody = JSON.stringify({
      executionId: 'e1',
      instanceId: '1',
      taskName: 'order_stat',
      bizDate: '2026-12-01',
      expectedTime: '2026-12-01T02:00:00.000Z',
      attempt: 1,
      params: {},
      traceId: TRACE,
      deadline: new Date(Date.now() + 60_000).toISOString(),
    });
    const headers = { ...signedHeaders(KEYS, { method: 'POST', path: '/job', body: rawBody }), 'idempotency-key': 'order_stat:2026-12-01T02:00:00.000Z:1', 'x-ax-worker': 'w1', ...extraHeaders };
    const answer = await handler.handle({ rawBody, headers, method: 'POST', path: '/job' });
    expect(answer.status).toBe(200);
    return seen[0];
  };

  it('is the parsed traceparent header, or null without one', async () => {
    expect((await call({ traceparent: `00-${TRACE}-${SPAN}-01` }))?.trace).toMatchObject({ traceId: TRACE, parentSpanId: SPAN, sampled: true });
    expect((await call({}))?.trace).toBeNull();
    expect((await call({ traceparent: 'garbage' }))?.trace).toBeNull();
  });
});
