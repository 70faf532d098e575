import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@ax/kit';
import { afterEach, describe, expect, it } from 'vitest';
import { createAlertWebhook, workerAlertBody, type WorkerAlert } from './alert-webhook.js';

const alert: WorkerAlert = {
  kind: 'CLOCK_SKEW',
  severity: 'critical',
  workerId: 'w1',
  message: 'worker clock is 10000 ms off Redis TIME (limit 2000 ms): refusing work and leaving the registry',
  at: '2026-11-29T12:00:00.000Z',
};
const logger = createLogger({ service: 'worker-test', level: 'silent' });
const servers: Array<ReturnType<typeof createServer>> = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A webhook that answers `statuses` in turn (then 200) and records the bodies. */
async function webhook(statuses: number[]): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      bodies.push(JSON.parse(text));
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

describe('the worker alert webhook', () => {
  it('formats the generic body of ADMIN-API.md and the chat formats', () => {
    expect(workerAlertBody(alert, 'generic')).toEqual({ kind: 'CLOCK_SKEW', severity: 'critical', workerId: 'w1', message: alert.message, at: alert.at });
    expect(workerAlertBody(alert, 'slack')).toEqual({ text: `[ax critical] CLOCK_SKEW worker w1: ${alert.message} (${alert.at})` });
    expect(workerAlertBody(alert, 'dingtalk')).toEqual({ msgtype: 'text', text: { content: `[ax critical] CLOCK_SKEW worker w1: ${alert.message} (${alert.at})` } });
  });

  it('POSTs the alert, retrying a failed delivery', async () => {
    const hook = await webhook([500]);
    const send = createAlertWebhook({ url: hook.url, format: 'generic', logger, backoffMs: 10 });
    expect(await send(alert)).toBe(true);
    expect(hook.bodies).toHaveLength(2);
    expect(hook.bodies[1]).toMatchObject({ kind: 'CLOCK_SKEW', workerId: 'w1' });
  });

  it('gives up after its attempts without throwing, and does nothing without a URL', async () => {
    const hook = await webhook([500, 500, 500]);
    expect(await createAlertWebhook({ url: hook.url, format: 'generic', logger, attempts: 3, backoffMs: 5 })(alert)).toBe(false);
    expect(hook.bodies).toHaveLength(3);
    expect(await createAlertWebhook({ url: undefined, format: 'generic', logger })(alert)).toBe(false);
  });
});
