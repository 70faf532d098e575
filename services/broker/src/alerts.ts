/**
 * Alert delivery (DESIGN §7, §11 "Noisy neighbours"): reads undelivered `alert_log` rows
 * (raised anywhere with `raiseAlert`, deduplicated by key) and POSTs each to its routes: the
 * platform's `AX_ALERT_WEBHOOK_URL` (format `AX_ALERT_WEBHOOK_FORMAT`) and the `alertRoutes` of
 * the alert's team that take its kind (`planAlertRoutes`). Each route is tried on its own: one
 * broker at a time per (alert, route) by a Redis claim `<ns>:lock:alert:<id>:<route>` (SET NX
 * PX) taken before the POST, whose TTL after a failure is the retry backoff (5 s doubling to
 * 10 min); each attempt is recorded in `alert_delivery`; after {@link ROUTE_MAX_ATTEMPTS}
 * failures a route is `gave_up` (visible in `GET /alerts` and `ax_alert_deliveries_total`,
 * not retried forever). The alert is marked delivered (conditional `UPDATE … WHERE
 * delivered_at IS NULL`) once every route is final. An alert with no route at all is logged
 * and recorded `not_configured`: nothing claims a delivery that did not happen. Runs in its
 * own loop: it never blocks dispatch.
 */
import { request } from 'undici';
import { planAlertRoutes, NO_ALERT_ROUTE, type PlannedAlertRoute } from '@ax/core';
import { toError } from '@ax/kit';
import {
  getTeamsAlertRoutes,
  listAlertDeliveries,
  listUndeliveredAlerts,
  markAlertDelivered,
  recordAlertDelivery,
  type AlertDeliveryRecord,
  type PendingAlert,
} from '@ax/store';
import type { AlertWebhookFormat } from './config.js';
import type { BrokerContext } from './context.js';

/** The generic JSON of ADMIN-API.md ("Shapes of … alerts"). */
export function genericAlertBody(alert: PendingAlert): Record<string, unknown> {
  return {
    kind: alert.kind,
    severity: alert.severity,
    ...(alert.team != null ? { team: alert.team } : {}),
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
/**
 * Failed attempts after which a route is given up for that alert: 10 attempts at 5 s doubling
 * to 10 min span about 40 minutes, long enough for a webhook's restart or a short outage.
 */
export const ROUTE_MAX_ATTEMPTS = 10;

/** The backoff before attempt `failures + 1` of a route. */
export function routeBackoffMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.min(Math.max(failures - 1, 0), 20));
}

const FINAL: ReadonlySet<string> = new Set(['sent', 'gave_up', 'not_configured']);

/** POSTs one alert to one route; throws when the webhook did not take it. */
async function post(ctx: BrokerContext, alert: PendingAlert, route: PlannedAlertRoute): Promise<void> {
  const response = await request(route.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(alertBody(alert, route.format)),
    headersTimeout: ctx.config.alertTimeoutMs,
    bodyTimeout: ctx.config.alertTimeoutMs,
  });
  await response.body.text();
  if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`webhook answered HTTP ${response.statusCode}`);
}

/** Tries one route of one alert once (when no other broker has it and it is not backing off); returns its record, or undefined when not tried. */
async function tryRoute(ctx: BrokerContext, alert: PendingAlert, route: PlannedAlertRoute, earlier: AlertDeliveryRecord | undefined): Promise<AlertDeliveryRecord['state'] | undefined> {
  const lockKey = ctx.keys.lock(`alert:${alert.id}:${route.key}`);
  const claimed = await ctx.redis.set(lockKey, ctx.config.brokerId, 'PX', ctx.config.alertTimeoutMs * 2 + 1_000, 'NX');
  if (claimed !== 'OK') return undefined; // another broker has it, or it is backing off
  const failures = earlier?.attempts ?? 0;
  const base = { alertId: alert.id, route: route.key, target: route.target, format: route.format };
  try {
    await post(ctx, alert, route);
    await recordAlertDelivery(ctx.pool, { ...base, state: 'sent', attempts: failures + 1, lastError: null });
    ctx.metrics.alertsDelivered.inc({ outcome: 'delivered' });
    return 'sent';
  } catch (thrown) {
    const error = toError(thrown);
    const attempts = failures + 1;
    const state = attempts >= ROUTE_MAX_ATTEMPTS ? 'gave_up' : 'failed';
    await recordAlertDelivery(ctx.pool, { ...base, state, attempts, lastError: error.message });
    await ctx.redis.pexpire(lockKey, routeBackoffMs(attempts));
    ctx.metrics.alertsDelivered.inc({ outcome: state === 'gave_up' ? 'gave_up' : 'failed' });
    const fields = { err: error, alertId: alert.id, kind: alert.kind, route: route.key.split(':')[0], target: route.target, attempts };
    if (state === 'gave_up') ctx.logger.error(fields, `alert delivery given up after ${attempts} attempts`);
    else ctx.logger.warn({ ...fields, retryInMs: routeBackoffMs(attempts) }, 'alert delivery failed');
    return state;
  }
}

/** One delivery pass; returns how many alerts were finished (every route final). */
export async function deliverAlertsOnce(ctx: BrokerContext): Promise<number> {
  const alerts = await listUndeliveredAlerts(ctx.pool, 50);
  if (alerts.length === 0) return 0;
  const teams = [...new Set(alerts.map((a) => a.team).filter((t): t is string => t != null))];
  const [teamRoutes, deliveries] = await Promise.all([getTeamsAlertRoutes(ctx.pool, teams), listAlertDeliveries(ctx.pool, alerts.map((a) => a.id))]);
  const url = ctx.config.alertWebhookUrl;
  const platform = url === undefined ? undefined : { url, format: ctx.config.alertWebhookFormat };
  let finished = 0;
  for (const alert of alerts) {
    // On a schema before 0012 (deliveries null) only the platform webhook is known, as before.
    const routes = planAlertRoutes(alert.kind, platform, deliveries === null ? [] : (teamRoutes.get(alert.team ?? '') ?? []));
    if (routes.length === 0) {
      ctx.logger.warn({ alert: genericAlertBody(alert) }, 'alert (no route: no AX_ALERT_WEBHOOK_URL and no team alertRoutes)');
      if (deliveries !== null) await recordAlertDelivery(ctx.pool, { alertId: alert.id, route: NO_ALERT_ROUTE, target: '', format: 'generic', state: 'not_configured', attempts: 0, lastError: null });
      ctx.metrics.alertsDelivered.inc({ outcome: 'not_configured' });
      if (await markAlertDelivered(ctx.pool, alert.id)) finished++;
      continue;
    }
    const records = new Map((deliveries?.get(alert.id) ?? []).map((d) => [d.route, d]));
    let allFinal = true;
    for (const route of routes) {
      const earlier = records.get(route.key);
      if (earlier !== undefined && FINAL.has(earlier.state)) continue;
      const state = await tryRoute(ctx, alert, route, earlier);
      if (state === undefined || !FINAL.has(state)) allFinal = false;
    }
    if (allFinal && (await markAlertDelivered(ctx.pool, alert.id))) finished++;
  }
  return finished;
}
