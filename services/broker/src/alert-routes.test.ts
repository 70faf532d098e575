/**
 * Team alert routes (DESIGN §11 "Noisy neighbours": alerts reach the team they are about;
 * ADMIN-API.md "Teams" `alertRoutes`): a team's alert goes to the platform webhook and to the
 * routes of its team that take its kind, in each route's format, never to another team's; each
 * route is recorded on its own; a route that keeps failing is given up, not retried forever; an
 * alert with no route at all is recorded `not_configured`, not claimed delivered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2';
import { insertTeam, raiseAlert, setTeamAlertRoutes } from '@ax/store';
import { waitFor } from '@ax/testing';
import { ROUTE_MAX_ATTEMPTS } from './alerts.js';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

/** A webhook that records what it is sent and answers `status`. */
class Hook {
  readonly bodies: Array<Record<string, unknown>> = [];
  private readonly server: Server;
  constructor(private readonly status: number) {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        this.bodies.push(JSON.parse(body) as Record<string, unknown>);
        res.writeHead(this.status).end('{}');
      });
    });
  }
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }
  url(path = '/hook'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }
  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function rows(h: BrokerHarness, sql: string, params: unknown[] = []): Promise<RowDataPacket[]> {
  const [r] = await h.db.pool.query<RowDataPacket[]>(sql, params);
  return r;
}

async function alertId(h: BrokerHarness, message: string): Promise<string> {
  const [row] = await rows(h, 'SELECT id FROM alert_log WHERE message = ?', [message]);
  return String(row?.['id']);
}

describe('team alert routes', () => {
  let h: BrokerHarness;
  const platform = new Hook(200);
  const paySlack = new Hook(200);
  const payDown = new Hook(500);
  const ship = new Hook(200);

  beforeAll(async () => {
    await Promise.all([platform.start(), paySlack.start(), payDown.start(), ship.start()]);
    h = await startBrokerHarness({ alertWebhookUrl: platform.url() });
    await insertTeam(h.db.pool, { name: 'pay', description: '', maxRunning: null });
    await insertTeam(h.db.pool, { name: 'ship', description: '', maxRunning: null });
    await setTeamAlertRoutes(h.db.pool, 'pay', [
      { url: paySlack.url('/services/T1/B1/secret'), format: 'slack' },
      { url: payDown.url(), format: 'generic', kinds: ['FINAL_FAILURE'] },
      { url: payDown.url('/sla-only'), format: 'generic', kinds: ['SLA_MISSED'] },
    ]);
    await setTeamAlertRoutes(h.db.pool, 'ship', [{ url: ship.url(), format: 'generic' }]);
    await h.task('pay_job', { team: 'pay' });
  });

  afterAll(async () => {
    await h?.close();
    await Promise.all([platform.close(), paySlack.close(), payDown.close(), ship.close()]);
  });

  it("a team's alert goes to the platform and to its team's routes for that kind, each in its format, never to another team's", async () => {
    await raiseAlert(h.db.pool, { kind: 'FINAL_FAILURE', severity: 'critical', subject: 'task:pay_job:1', taskName: 'pay_job', message: 'pay_job failed for good' });
    await waitFor(() => platform.bodies.length === 1 && paySlack.bodies.length === 1 && payDown.bodies.length === 1, { description: 'three routes tried', timeoutMs: 15_000 });
    expect(platform.bodies[0]).toMatchObject({ kind: 'FINAL_FAILURE', team: 'pay', taskName: 'pay_job', message: 'pay_job failed for good' });
    expect(String(paySlack.bodies[0]?.['text'])).toContain('FINAL_FAILURE pay_job: pay_job failed for good');
    expect(payDown.bodies[0]).toMatchObject({ kind: 'FINAL_FAILURE', team: 'pay' });
    expect(ship.bodies).toEqual([]);

    const id = await alertId(h, 'pay_job failed for good');
    const deliveries = await waitFor(
      async () => {
        const found = await rows(h, 'SELECT route, target, format, state, attempts, last_error FROM alert_delivery WHERE alert_id = ? ORDER BY route', [id]);
        return found.length === 3 ? found : null;
      },
      { description: 'three delivery records', timeoutMs: 10_000 },
    );
    const byFormat = new Map(deliveries.map((d) => [`${String(d['route']).split(':')[0]}/${String(d['format'])}`, d]));
    expect(byFormat.get('platform/generic')).toMatchObject({ state: 'sent', attempts: 1, last_error: null });
    expect(byFormat.get('team/slack')).toMatchObject({ state: 'sent', attempts: 1, target: new URL(paySlack.url()).origin });
    expect(byFormat.get('team/generic')).toMatchObject({ state: 'failed', attempts: 1, last_error: 'webhook answered HTTP 500' });
    // One route still failing: the alert is not finished, and it is retried after its backoff, not before.
    const [alert] = await rows(h, 'SELECT delivered_at FROM alert_log WHERE id = ?', [id]);
    expect(alert?.['delivered_at']).toBeNull();
  });

  it('a route that keeps failing is given up after its attempts, and the alert is finished without calling the other routes again', async () => {
    const id = await alertId(h, 'pay_job failed for good');
    const [failing] = await rows(h, `SELECT route FROM alert_delivery WHERE alert_id = ? AND state = 'failed'`, [id]);
    const route = String(failing?.['route']);
    // As if it had failed all but its last attempt, and its backoff were over.
    await h.db.pool.query('UPDATE alert_delivery SET attempts = ? WHERE alert_id = ? AND route = ?', [ROUTE_MAX_ATTEMPTS - 1, id, route]);
    const triedBefore = payDown.bodies.length;
    await h.redis.redis.del(h.keys.lock(`alert:${id}:${route}`));
    const done = await waitFor(
      async () => {
        const [row] = await rows(h, 'SELECT a.delivered_at, d.state, d.attempts FROM alert_log a JOIN alert_delivery d ON d.alert_id = a.id WHERE a.id = ? AND d.route = ?', [id, route]);
        return row?.['delivered_at'] == null ? null : row;
      },
      { description: 'the alert finished', timeoutMs: 15_000 },
    );
    expect(done).toMatchObject({ state: 'gave_up', attempts: ROUTE_MAX_ATTEMPTS });
    expect(payDown.bodies).toHaveLength(triedBefore + 1);
    expect(platform.bodies).toHaveLength(1);
    expect(paySlack.bodies).toHaveLength(1);
  });

  it('an alert of no team (a worker) goes to the platform only', async () => {
    await raiseAlert(h.db.pool, { kind: 'CLOCK_SKEW', severity: 'warning', subject: 'worker:w-routes', workerId: 'w-routes', message: 'w-routes clock off' });
    await waitFor(() => platform.bodies.some((b) => b['workerId'] === 'w-routes'), { description: 'platform delivery', timeoutMs: 15_000 });
    expect(paySlack.bodies.some((b) => String(b['text']).includes('w-routes'))).toBe(false);
    expect(ship.bodies).toEqual([]);
  });
});

describe('an alert with nowhere to go', () => {
  let h: BrokerHarness;
  beforeAll(async () => {
    h = await startBrokerHarness({ alertWebhookUrl: undefined });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('is recorded not_configured, not claimed delivered to a webhook', async () => {
    await raiseAlert(h.db.pool, { kind: 'NO_WORKER', severity: 'warning', subject: 'global', message: 'nobody listens' });
    const id = await alertId(h, 'nobody listens');
    const record = await waitFor(
      async () => {
        const [row] = await rows(h, 'SELECT route, state, attempts FROM alert_delivery WHERE alert_id = ?', [id]);
        return row ?? null;
      },
      { description: 'not_configured recorded', timeoutMs: 15_000 },
    );
    expect(record).toMatchObject({ route: 'none', state: 'not_configured', attempts: 0 });
    const [alert] = await rows(h, 'SELECT delivered_at FROM alert_log WHERE id = ?', [id]);
    expect(alert?.['delivered_at']).not.toBeNull();
  });
});
