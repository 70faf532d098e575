/** Unauthenticated endpoints: liveness, readiness (MySQL, Redis, RabbitMQ), metrics, the OpenAPI document. */
import { z } from 'zod';
import { runReadinessChecks, type ReadinessCheck } from '@ax/kit';
import { defineRoute, type RouteSpec } from '../route.js';
import type { AppDeps } from '../deps.js';

/** The readiness checks of the admin API. */
export function readinessChecks(deps: AppDeps): ReadinessCheck[] {
  return [
    { name: 'mysql', check: async () => void (await deps.pool.query('SELECT 1')) },
    { name: 'redis', check: async () => void (await deps.redis.ping()) },
    {
      name: 'rabbitmq',
      check: () => {
        if (deps.bus === null) return Promise.reject(new Error('not configured'));
        return deps.bus.connected ? Promise.resolve() : Promise.reject(new Error('not connected'));
      },
    },
  ];
}

/** System routes; `openapi` returns the document (built once, lazily, from all routes). */
export function systemRoutes(openapi: () => Record<string, unknown>, isDraining: () => boolean): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      access: 'public',
      tag: 'system',
      summary: 'Liveness',
      responses: { 200: { description: 'alive', schema: z.object({ status: z.literal('ok') }) } },
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      access: 'public',
      tag: 'system',
      summary: 'Readiness: MySQL, Redis and RabbitMQ reachable',
      responses: {
        200: { description: 'ready', schema: z.object({ status: z.string(), checks: z.array(z.object({ name: z.string(), ok: z.boolean() })) }) },
        503: { description: 'not ready (or draining)' },
      },
      handler: async ({ deps }) => {
        const checks = await runReadinessChecks(readinessChecks(deps), 2_000);
        const ok = checks.every((c) => c.ok) && !isDraining();
        return { status: ok ? 200 : 503, body: { status: isDraining() ? 'draining' : ok ? 'ready' : 'not ready', checks } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/metrics',
      access: 'public',
      tag: 'system',
      summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text format', schema: z.string(), contentType: 'text/plain' } },
      handler: async ({ deps, res }) => {
        const text = await deps.metrics.registry.metrics();
        res.status(200).setHeader('content-type', deps.metrics.registry.contentType);
        res.end(text);
        return { status: 200, sent: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/openapi.json',
      access: 'public',
      tag: 'system',
      summary: 'This OpenAPI document',
      responses: { 200: { description: 'OpenAPI 3.1 document', schema: z.record(z.string(), z.unknown()) } },
      handler: () => ({ status: 200, body: openapi() }),
    }),
  ];
}
