/**
 * `GET /api/v1/alerts` (ADMIN-API.md "Endpoints", "Shapes of … alerts"): the alerts raised
 * (`alert_log`), newest first, each as the webhook body plus its delivery state. Alerts are of
 * the team of their task (through their instance, else their task name): a token sees its
 * teams' alerts; alerts of no task (workers, clocks) only tokens of every team.
 *
 * Delivery (from `alert_delivery`, written by the broker's alert loop per route: the platform's
 * webhook and the team's `alertRoutes`): `sent` once every route took it; `failed` when a route
 * failed (retried with backoff, then given up: `routes[].state` says which); `not_configured`
 * when the alert had no route at all (it was only logged); `pending` otherwise. Alerts delivered
 * by a build before migration 0012 have no route records and read `sent`.
 */
import { z } from 'zod';
import { listAlertDeliveries, listAlerts, type AlertDeliveryRecord, type AlertRecord } from '@ax/store';
import { validationFailed } from '../errors.js';
import { decodeCursor, encodeCursor, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { instantSchema, listOf, taskNameSchema } from '../schemas.js';
import { visibleTeams } from '../team-scope.js';

const DELIVERY = ['pending', 'sent', 'failed', 'not_configured'] as const;
type Delivery = (typeof DELIVERY)[number];

/** Rounds of reading for `delivery=pending|failed|not_configured` (told apart after SQL): a page may be short, its cursor goes on. */
const MAX_FILTER_ROUNDS = 10;

const alertRouteDeliverySchema = z.object({
  route: z.enum(['platform', 'team']).describe("platform: AX_ALERT_WEBHOOK_URL; team: one of the team's alertRoutes"),
  target: z.string().describe('scheme://host of the webhook (never its path, which may hold a token)'),
  format: z.string(),
  state: z.enum(['sent', 'failed', 'gave_up']).describe('failed: retried with backoff; gave_up: failed too often, not retried any more'),
  attempts: z.int(),
  lastError: z.string().nullable(),
  at: z.string().describe('time of the last attempt'),
});

export const alertSchema = z.object({
  id: z.string().describe('extension'),
  kind: z.string().describe('FINAL_FAILURE, LOST_WORKER, NO_WORKER, CLOCK_SKEW, BACKLOG, DID_NOT_FIRE, LONG_RUNNING, UPSTREAM_MISSING, SLA_MISSED, TASK_PAUSED, …'),
  severity: z.enum(['critical', 'warning']),
  team: z.string().optional().describe("the team of its task; absent for alerts of no task's"),
  taskName: z.string().optional(),
  instanceId: z.string().optional(),
  workerId: z.string().optional(),
  reason: z.string().optional(),
  message: z.string(),
  at: z.string(),
  delivery: z
    .enum(DELIVERY)
    .describe('sent: every route took it; failed: a route failed (see routes); not_configured (extension): no AX_ALERT_WEBHOOK_URL and no team route, the alert was only logged; pending: not tried yet'),
  attempts: z.int().describe('delivery attempts over every route'),
  routes: z.array(alertRouteDeliverySchema).describe('extension: the delivery of each route tried, the platform webhook first'),
  deliveredAt: z.string().nullable().describe('extension: when every route was final'),
});

type RouteDelivery = z.infer<typeof alertRouteDeliverySchema>;

function routeOf(record: AlertDeliveryRecord): RouteDelivery {
  return {
    route: record.route === 'platform' ? 'platform' : 'team',
    target: record.target,
    format: record.format,
    state: record.state === 'sent' || record.state === 'gave_up' ? record.state : 'failed',
    attempts: record.attempts,
    lastError: record.lastError,
    at: record.updatedAt.toISOString(),
  };
}

/** The alert's delivery state from its route records (see the module comment). */
export function deliveryOf(alert: Pick<AlertRecord, 'deliveredAt'>, records: readonly AlertDeliveryRecord[]): { delivery: Delivery; attempts: number; routes: RouteDelivery[] } {
  if (records.some((r) => r.state === 'not_configured')) return { delivery: 'not_configured', attempts: 0, routes: [] };
  const routes = records.map(routeOf);
  const attempts = records.reduce((sum, r) => sum + r.attempts, 0);
  if (records.some((r) => r.state === 'failed' || r.state === 'gave_up')) return { delivery: 'failed', attempts, routes };
  if (alert.deliveredAt !== null) return { delivery: 'sent', attempts: records.length === 0 ? 1 : attempts, routes };
  return { delivery: 'pending', attempts, routes };
}

function alertResource(alert: AlertRecord, records: readonly AlertDeliveryRecord[]): Record<string, unknown> {
  return {
    id: alert.id,
    kind: alert.kind,
    severity: alert.severity,
    ...(alert.team === null ? {} : { team: alert.team }),
    ...(alert.taskName === null ? {} : { taskName: alert.taskName }),
    ...(alert.instanceId === null ? {} : { instanceId: alert.instanceId }),
    ...(alert.workerId === null ? {} : { workerId: alert.workerId }),
    ...(alert.reason === null ? {} : { reason: alert.reason }),
    message: alert.message,
    at: alert.at.toISOString(),
    ...deliveryOf(alert, records),
    deliveredAt: alert.deliveredAt === null ? null : alert.deliveredAt.toISOString(),
  };
}

interface AlertQuery {
  kind?: string;
  task?: string;
  severity?: 'critical' | 'warning';
  delivery?: Delivery;
  from?: string;
  to?: string;
  limit: number;
  cursor?: string;
}

export const alertRoutes: RouteSpec[] = [
  defineRoute<unknown, AlertQuery>({
    method: 'get',
    path: '/api/v1/alerts',
    access: 'viewer',
    tag: 'alerts',
    summary: "Alerts raised, newest first, of the token's teams, with their delivery state",
    query: z.object({
      kind: z
        .string()
        .regex(/^[A-Z][A-Z0-9_]{0,31}(,[A-Z][A-Z0-9_]{0,31})*$/, 'must be an alert kind such as FINAL_FAILURE (extension: a comma list)')
        .optional(),
      task: taskNameSchema.optional().describe('alerts of this task'),
      severity: z.enum(['critical', 'warning']).optional().describe('extension'),
      delivery: z.enum(DELIVERY).optional().describe('extension: only alerts in this delivery state'),
      from: instantSchema.optional().describe('raised at or after'),
      to: instantSchema.optional().describe('raised before'),
      ...pageQueryShape,
    }),
    responses: { 200: { description: 'a page of alerts', schema: listOf(alertSchema) } },
    handler: async ({ query, deps, principal }) => {
      let before = decodeCursor(query.cursor);
      if (before === null || (before !== undefined && !/^\d{1,20}$/.test(before))) {
        throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      }
      const base = {
        teams: visibleTeams(principal),
        ...(query.kind === undefined ? {} : { kinds: query.kind.split(',') }),
        ...(query.task === undefined ? {} : { taskName: query.task }),
        ...(query.severity === undefined ? {} : { severity: query.severity }),
        // sent and not_configured are delivered; pending never is; failed may be either (given up, or retried)
        ...(query.delivery === 'sent' || query.delivery === 'not_configured' ? { delivered: true } : query.delivery === 'pending' ? { delivered: false } : {}),
        ...(query.from === undefined ? {} : { from: new Date(query.from) }),
        ...(query.to === undefined ? {} : { to: new Date(query.to) }),
      };
      const items: Array<Record<string, unknown>> = [];
      for (let round = 0; round < MAX_FILTER_ROUNDS; round++) {
        const rows = await listAlerts(deps.pool, { ...base, ...(before === undefined ? {} : { beforeId: before }), limit: query.limit - items.length + 1 });
        const more = rows.length > query.limit - items.length;
        const page = more ? rows.slice(0, query.limit - items.length) : rows;
        const records = (await listAlertDeliveries(deps.pool, page.map((a) => a.id))) ?? new Map<string, AlertDeliveryRecord[]>();
        for (const alert of page) {
          const resource = alertResource(alert, records.get(alert.id) ?? []);
          if (query.delivery === undefined || resource['delivery'] === query.delivery) items.push(resource);
        }
        const last = page[page.length - 1];
        if (!more || last === undefined) return { status: 200, body: { items, nextCursor: null } };
        before = last.id;
        if (items.length >= query.limit) break;
      }
      return { status: 200, body: { items, nextCursor: before === undefined ? null : encodeCursor(before) } };
    },
  }),
];
