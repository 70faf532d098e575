import { describe, expect, it } from 'vitest';
import type { WorkerSnapshot } from '@ax/core';
import { alertBody } from './alerts.js';
import { claimSize, MIN_CLAIM } from './dispatch.js';
import { LinkMonitor } from './links.js';
import { uuidv7 } from './uuidv7.js';

describe('R9 claim size', () => {
  const worker = (id: string, slots: number, running: number, draining = false): WorkerSnapshot => ({
    id,
    tags: [],
    cores: 2,
    slots,
    running,
    avgDurationMs5m: 0,
    draining,
    host: 'h',
    version: 'v',
  });

  it('claims no more than the free slots of routable workers, at least MIN_CLAIM, at most the batch', () => {
    expect(claimSize(500, [worker('a', 256, 200), worker('b', 256, 0)], 0, 500)).toBe(312);
    expect(claimSize(500, [worker('a', 256, 250)], 0, 500)).toBe(MIN_CLAIM);
    expect(claimSize(200, [worker('a', 1_000, 0)], 0, 500)).toBe(200);
    expect(claimSize(500, [worker('a', 256, 0, true)], 0, 500)).toBe(MIN_CLAIM); // draining slots do not count
  });

  it('while every slot is taken, claims MIN_CLAIM at most once per interval; with no routable worker always (R11 NO_WORKER)', () => {
    const full = [worker('a', 10, 10), worker('b', 10, 12)];
    expect(claimSize(500, full, 100, 500)).toBe(0);
    expect(claimSize(500, full, 500, 500)).toBe(MIN_CLAIM);
    expect(claimSize(500, [], 0, 500)).toBe(MIN_CLAIM);
    expect(claimSize(500, [worker('a', 10, 0, true)], 0, 500)).toBe(MIN_CLAIM);
  });
});

describe('uuidv7', () => {
  it('is a version 7, variant 10 UUID that sorts by creation time', () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => uuidv7(1_700_000_000_000 + Math.floor(i / 500)));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Number.parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16)).toBe(1_700_000_000_000);
  });
});

describe('R14 link monitor', () => {
  it('suspends expiry while a link is down and for one lease period after it returns', () => {
    let now = 0;
    const links = new LinkMonitor(15_000, () => now);
    expect(links.expirySuspended).toBe(false);
    links.setAmqp(false);
    expect(links.expirySuspended).toBe(true);
    now = 60_000;
    links.setAmqp(true);
    now = 74_999;
    expect(links.expirySuspended).toBe(true);
    now = 75_001;
    expect(links.expirySuspended).toBe(false);
    links.setMysql(false);
    expect(links.expirySuspended).toBe(true);
  });
});

describe('alert webhook bodies', () => {
  const alert = {
    id: '1',
    kind: 'FINAL_FAILURE',
    severity: 'critical' as const,
    instanceId: '42',
    taskName: 'order_stat_daily',
    workerId: null,
    message: 'failed for good',
    at: new Date('2026-12-01T02:00:00.000Z'),
  };
  it('uses the generic JSON of the admin API contract', () => {
    expect(alertBody(alert, 'generic')).toEqual({
      kind: 'FINAL_FAILURE',
      severity: 'critical',
      taskName: 'order_stat_daily',
      instanceId: '42',
      message: 'failed for good',
      at: '2026-12-01T02:00:00.000Z',
    });
  });
  it('speaks DingTalk, WeCom and Slack', () => {
    const line = '[ax critical] FINAL_FAILURE order_stat_daily: failed for good (2026-12-01T02:00:00.000Z)';
    expect(alertBody(alert, 'dingtalk')).toEqual({ msgtype: 'text', text: { content: line } });
    expect(alertBody(alert, 'wecom')).toEqual({ msgtype: 'text', text: { content: line } });
    expect(alertBody(alert, 'slack')).toEqual({ text: line });
  });
});
