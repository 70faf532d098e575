/**
 * Alert delivery (DESIGN §7): reads undelivered `alert_log` rows (raised anywhere with
 * `raiseAlert`, deduplicated by key) and POSTs each to `AX_ALERT_WEBHOOK_URL` in the format of
 * `AX_ALERT_WEBHOOK_FORMAT`. One broker at a time per row: a Redis claim
 * `<ns>:lock:alert:<id>` (SET NX PX) taken before the POST, whose TTL after a failure is the
 * retry backoff (5 s doubling to 10 min), and the conditional `UPDATE … WHERE delivered_at IS
 * NULL` after it. Runs in its own loop: it never blocks dispatch. Without a webhook URL alerts
 * are logged and marked delivered.
 */
import { request } from 'undici';
import { toError } from '@ax/kit';
import { listUndeliveredAlerts, markAlertDelivered, type PendingAlert } from '@ax/store';
import type { AlertWebhookFormat } from './config.js';
import type { BrokerContext } from './context.js';

/** The generic JSON of ADMIN-API.md ("Shapes of … alerts"). */
export function genericAlertBody(alert: PendingAlert): Record<string, unknown> {
  return {
    kind: alert.kind,
    severity: alert.severity,
    ...(alert.taskName !== null ? { taskName: alert.taskName } : {}),
    ...(alert.instanceId !== null ? { instanceId: alert.instanceId } : {}),
    ...(alert.workerId !== null ? { workerId: alert.workerId } : {}),
    ...(alert.reason != null ? { reason: alert.reason } : {}),
    message: alert.message,
    at: alert.at.toISOString(),
  };
}

/** The body for a webhook format: generic JSON, DingTalk/WeCom `text`, or Slack `text`. */
export function alertBody(alert: PendingAlert, format: AlertWebhookFormat): Record<string, unknown> {
  const line = `[ax ${alert.severity}] ${alert.kind}${alert.taskName !== null ? ` ${alert.taskName}` : ''}: ${alert.message} (${alert.at.toISOString()})`;
  switch (format) {
    case 'generic':
      return genericAlertBody(alert);
    case 'dingtalk':
    case 'wecom':
      return { msgtype: 'text', text: { content: line } };
    case 'slack':
      return { text: line };
  }
}

const RETRY_INITIAL_MS = 5_000;
const RETRY_MAX_MS = 600_000;

/** One delivery pass; returns how many alerts were delivered. */
export async function deliverAlertsOnce(ctx: BrokerContext): Promise<number> {
  const alerts = await listUndeliveredAlerts(ctx.pool, 50);
  let delivered = 0;
  for (const alert of alerts) {
    const lockKey = ctx.keys.lock(`alert:${alert.id}`);
    const claimed = await ctx.redis.set(lockKey, ctx.config.brokerId, 'PX', ctx.config.alertTimeoutMs * 2 + 1_000, 'NX');
    if (claimed !== 'OK') continue; // another broker has it, or it is backing off
    const url = ctx.config.alertWebhookUrl;
    if (url === undefined) {
      ctx.logger.warn({ alert: genericAlertBody(alert) }, 'alert (no AX_ALERT_WEBHOOK_URL)');
      if (await markAlertDelivered(ctx.pool, alert.id)) delivered++;
      continue;
    }
    try {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alertBody(alert, ctx.config.alertWebhookFormat)),
        headersTimeout: ctx.config.alertTimeoutMs,
        bodyTimeout: ctx.config.alertTimeoutMs,
      });
      await response.body.text();
      if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`webhook answered HTTP ${response.statusCode}`);
      if (await markAlertDelivered(ctx.pool, alert.id)) delivered++;
      ctx.metrics.alertsDelivered.inc({ outcome: 'delivered' });
      await ctx.redis.del(ctx.keys.lock(`alert-attempts:${alert.id}`));
    } catch (thrown) {
      const attempts = await ctx.redis.incr(ctx.keys.lock(`alert-attempts:${alert.id}`));
      await ctx.redis.pexpire(ctx.keys.lock(`alert-attempts:${alert.id}`), 86_400_000);
      const backoff = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.min(attempts - 1, 20));
      await ctx.redis.pexpire(lockKey, backoff);
      ctx.metrics.alertsDelivered.inc({ outcome: 'failed' });
      ctx.logger.warn({ err: toError(thrown), alertId: alert.id, kind: alert.kind, attempts, retryInMs: backoff }, 'alert delivery failed');
    }
  }
  return delivered;
}
