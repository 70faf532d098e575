/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * A team's `alertRoutes` (ADMIN-API.md "Teams"): set by an admin of every team on create and
 * PATCH, validated field by field, removed with `[]`; a webhook URL often holds its token in
 * the path, so only an admin reads it whole: an operator of the team and the audit trail see
 * `scheme://host/***`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, startTestApp, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let opPay: string;
let adminPay: string;

const slack = 'https://hooks.slack.example/services/T1/B2/very-secret';
const wecom = 'https://qyapi.weixin.example/cgi-bin/webhook/send?key=also-secret';

beforeAll(async () => {
  t = await startTestApp();
  opPay = await addToken(t.pool, 'op-pay', 'operator', ['pay']);
  adminPay = await addToken(t.pool, 'admin-pay', 'admin', ['pay']);
});

afterAll(async () => {
  await t?.close();
});

describe('team alertRoutes', () => {
  it('an admin of every team creates a team with routes and reads them whole; format defaults to generic', async () => {
    const res = await t.call('POST', '/api/v1/teams', {
      body: { name: 'pay', alertRoutes: [{ url: slack, format: 'slack' }, { url: wecom, format: 'wecom', kinds: ['FINAL_FAILURE'] }, { url: 'https://ops.example/pay' }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.alertRoutes).toEqual([
      { url: slack, format: 'slack' },
      { url: wecom, format: 'wecom', kinds: ['FINAL_FAILURE'] },
      { url: 'https://ops.example/pay', format: 'generic' },
    ]);
    const list = await t.call('GET', '/api/v1/teams');
    expect(list.body.items.find((x: any) => x.name === 'pay').alertRoutes).toHaveLength(3);
    expect(list.body.items.find((x: any) => x.name === 'default').alertRoutes).toEqual([]);
  });

  it("the team's operator sees where its alerts go, but not the webhooks' tokens; the team's admin sees them whole", async () => {
    const asOperator = await t.call('GET', '/api/v1/teams', { token: opPay });
    expect(asOperator.body.items.map((x: any) => x.name)).toEqual(['pay']);
    expect(asOperator.body.items[0].alertRoutes).toEqual([
      { url: 'https://hooks.slack.example/***', format: 'slack' },
      { url: 'https://qyapi.weixin.example/***', format: 'wecom', kinds: ['FINAL_FAILURE'] },
      { url: 'https://ops.example/***', format: 'generic' },
    ]);
    expect(JSON.stringify(asOperator.body)).not.toContain('secret');
    const asAdmin = await t.call('GET', '/api/v1/teams', { token: adminPay });
    expect(asAdmin.body.items[0].alertRoutes[0].url).toBe(slack);
  });

  it('PATCH replaces the routes and [] removes them; the audit trail records the change without the tokens', async () => {
    const patched = await t.call('PATCH', '/api/v1/teams/pay', { body: { alertRoutes: [{ url: slack, format: 'slack', kinds: ['SLA_MISSED', 'FINAL_FAILURE'] }] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.alertRoutes).toEqual([{ url: slack, format: 'slack', kinds: ['SLA_MISSED', 'FINAL_FAILURE'] }]);
    // A PATCH of another field keeps them.
    expect((await t.call('PATCH', '/api/v1/teams/pay', { body: { description: 'payments' } })).body.alertRoutes).toHaveLength(1);
    const cleared = await t.call('PATCH', '/api/v1/teams/pay', { body: { alertRoutes: [] } });
    expect(cleared.body.alertRoutes).toEqual([]);
    const audit = await t.call('GET', '/api/v1/audit?limit=50');
    const updates = audit.body.items.filter((e: any) => e.action === 'team.update' && e.target === 'team:pay');
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(updates)).not.toContain('secret');
    expect(JSON.stringify(updates)).toContain('https://hooks.slack.example/***');
  });

  it('a bad route is refused with 400 naming the field, and nothing changes', async () => {
    await t.call('PATCH', '/api/v1/teams/pay', { body: { alertRoutes: [{ url: slack, format: 'slack' }] } });
    const bad: Array<[unknown, string]> = [
      [[{ url: 'ftp://files.example/x' }], 'alertRoutes[0].url'],
      [[{ url: 'https://user:pw@hooks.example/x' }], 'alertRoutes[0].url'],
      [[{ url: slack, format: 'teams' }], 'alertRoutes[0].format'],
      [[{ url: slack }, { url: slack, kinds: ['final_failure'] }], 'alertRoutes[1].kinds[0]'],
      [[{ url: slack, channel: '#pay' }], 'alertRoutes[0]'],
      [Array.from({ length: 11 }, (_, i) => ({ url: `https://hooks.example/${i}` })), 'alertRoutes'],
    ];
    for (const [alertRoutes, path] of bad) {
      const res = await t.call('PATCH', '/api/v1/teams/pay', { body: { alertRoutes } });
      expect({ status: res.status, code: res.body.error?.code }, JSON.stringify(res.body)).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      expect(JSON.stringify(res.body.error)).toContain(path);
    }
    expect((await t.call('GET', '/api/v1/teams', { token: adminPay })).body.items[0].alertRoutes).toEqual([{ url: slack, format: 'slack' }]);
  });

  it("a team's own admin cannot change its routes: the broker POSTs to them, so they are the platform's decision", async () => {
    const res = await t.call('PATCH', '/api/v1/teams/pay', { token: adminPay, body: { alertRoutes: [{ url: 'http://169.254.169.254/latest' }] } });
    expect(res.status).toBe(403);
  });
});
