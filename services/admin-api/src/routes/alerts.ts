/**
 * `GET /api/v1/alerts` (ADMIN-API.md "Endpoints", "Shapes of … alerts"): the alerts raised
 * (`alert_log`), newest first, each as the webhook body plus its delivery state. Alerts are of
 * the team of their task (through their instance, else their task name): a token sees its
 * teams' alerts; alerts of no task (workers, clocks) only tokens of every team.
 *
 * Delivery: `sent` once the broker's alert loop marked it delivered; `failed` while it is not
 * and the broker has recorded failed attempts (it keeps retrying with backoff, and keeps the
 * count in Redis `<ns>:lock:alert-attempts:<id>` for 24 h after the last failure, dropping it
 * on success); `pending` otherwise.
 */
import { z } from 'zod';
import { listAlerts, type AlertRecord } from '@ax/store';
import type { AppDeps } from '../deps.js';
import { validationFailed } from '../errors.js';
import { decodeCursor, encodeCursor, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { instantSchema, listOf, taskNameSchema } from '../schemas.js';
import { visibleTeams } from '../team-scope.js';

const DELIVERY = ['pending', 'sent', 'failed'] as const;
type Delivery = (typeof DELIVERY)[number];

/** Rounds of reading for `delivery=pending|failed` (told apart in Redis, after SQL): a page may be short, its cursor goes on. */
const MAX_FILTER_ROUNDS = 10;

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
  delivery: z.enum(DELIVERY).describe('sent: the webhook took it (or it was logged, without AX_ALERT_WEBHOOK_URL); failed: attempts failed, retried with backoff; pending: not tried yet'),
  attempts: z.int().describe('delivery attempts known: failed ones recorded, plus the one that succeeded'),
  deliveredAt: z.string().nullable().describe('extension'),
});

/** Failed delivery attempts the broker recorded, by alert id. */
async function failedAttempts(deps: AppDeps, ids: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (ids.length === 0) return out;
  const values = await deps.redis.mget(...ids.map((id) => deps.keys.lock(`alert-attempts:${id}`)));
  ids.forEach((id, index) => {
    const n = Number(values[index] ?? 0);
    out.set(id, Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
  });
  return out;
}

function deliveryOf(alert: AlertRecord, failed: number): { delivery: Delivery; attempts: number } {
  if (alert.deliveredAt !== null) return { delivery: 'sent', attempts: failed + 1 };
  return failed > 0 ? { delivery: 'failed', attempts: failed } : { delivery: 'pending', attempts: 0 };
}

function alertResource(alert: AlertRecord, failed: number): Record<string, unknown> {
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
    ...deliveryOf(alert, failed),
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
        ...(query.delivery === undefined ? {} : { delivered: query.delivery === 'sent' }),
        ...(query.from === undefined ? {} : { from: new Date(query.from) }),
        ...(query.to === undefined ? {} : { to: new Date(query.to) }),
      };
      const items: Array<Record<string, unknown>> = [];
      for (let round = 0; round < MAX_FILTER_ROUNDS; round++) {
        const rows = await listAlerts(deps.pool, { ...base, ...(before === undefined ? {} : { beforeId: before }), limit: query.limit - items.length + 1 });
        const more = rows.length > query.limit - items.length;
        const page = more ? rows.slice(0, query.limit - items.length) : rows;
        const failed = await failedAttempts(deps, page.map((a) => a.id));
        for (const alert of page) {
          const resource = alertResource(alert, failed.get(alert.id) ?? 0);
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
