import { afterEach, describe, expect, it } from 'vitest';
import { startHealthServer, type HealthServer } from './health.js';
import { silentLogger } from './logger.js';
import { createMetrics } from './metrics.js';

const servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(opts: Partial<Parameters<typeof startHealthServer>[0]> = {}): Promise<HealthServer> {
  const server = await startHealthServer({ port: 0, host: '127.0.0.1', logger: silentLogger(), ...opts });
  servers.push(server);
  return server;
}

async function get(server: HealthServer, path: string, init?: RequestInit): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(`${server.url}${path}`, init);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

describe('startHealthServer', () => {
  it('answers /healthz while alive', async () => {
    const server = await start();
    expect(server.port).toBeGreaterThan(0);
    const res = await get(server, '/healthz');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ status: 'ok' });
    expect(res.type).toContain('application/json');
  });

  it('answers /readyz 200 when every check passes', async () => {
    const server = await start({
      readiness: [
        { name: 'mysql', check: async () => undefined },
        { name: 'redis', check: async () => undefined },
      ],
    });
    const res = await get(server, '/readyz');
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as { status: string; checks: Array<{ name: string; ok: boolean }> };
    expect(body.status).toBe('ready');
    expect(body.checks.map((c) => [c.name, c.ok])).toEqual([
      ['mysql', true],
      ['redis', true],
    ]);
  });

  it('answers /readyz 503 naming the failed check and why, without a stack or a password', async () => {
    const server = await start({
      readinessTimeoutMs: 100,
      readiness: [
        { name: 'mysql', check: async () => undefined },
        {
          name: 'amqp',
          check: async () => {
            throw new Error('connect ECONNREFUSED amqp://guest:hunter2@127.0.0.1:5672');
          },
        },
        { name: 'redis', check: () => new Promise<void>(() => undefined) },
      ],
    });
    const res = await get(server, '/readyz');
    expect(res.status).toBe(503);
    const body = JSON.parse(res.body) as { status: string; checks: Array<{ name: string; ok: boolean; error?: string }> };
    expect(body.status).toBe('unready');
    expect(body.checks).toEqual([
      expect.objectContaining({ name: 'mysql', ok: true }),
      expect.objectContaining({ name: 'amqp', ok: false, error: 'connect ECONNREFUSED amqp://guest:***@127.0.0.1:5672' }),
      expect.objectContaining({ name: 'redis', ok: false, error: 'timed out after 100 ms' }),
    ]);
    expect(res.body).not.toMatch(/\bat .*\(|hunter2/);
  });

  it('answers /readyz 503 draining once shutdown began', async () => {
    const server = await start({ readiness: [{ name: 'x', check: async () => undefined }] });
    server.setDraining();
    const res = await get(server, '/readyz');
    expect(res.status).toBe(503);
    expect(JSON.parse(res.body)).toEqual({ status: 'draining' });
  });

  it('serves the registry on /metrics in Prometheus text format', async () => {
    const metrics = createMetrics({ service: 'broker' });
    metrics.counter({ name: 'ax_test_dispatches_total', help: 'test' }).inc(3);
    const server = await start({ registry: metrics.registry });
    const res = await get(server, '/metrics');
    expect(res.status).toBe(200);
    expect(res.type).toContain('text/plain');
    expect(res.body).toContain('ax_test_dispatches_total{service="broker"} 3');
    expect(res.body).toContain('process_cpu_user_seconds_total');
  });

  it('mounts extra routes and answers 404 / 405 otherwise', async () => {
    const server = await start({
      routes: {
        '/debug/one': (_req, res) => {
          res.end('one');
        },
      },
    });
    server.route('/debug/two', (_req, res) => {
      res.writeHead(201).end('two');
    });
    expect(await get(server, '/debug/one?x=1')).toMatchObject({ status: 200, body: 'one' });
    expect(await get(server, '/debug/two')).toMatchObject({ status: 201, body: 'two' });
    expect((await get(server, '/nope')).status).toBe(404);
    expect((await get(server, '/metrics')).status).toBe(404); // no registry given
    expect((await get(server, '/healthz', { method: 'POST' })).status).toBe(405);
  });

  it('answers 500 when an extra route throws', async () => {
    const server = await start({
      routes: {
        '/boom': () => {
          throw new Error('boom');
        },
      },
    });
    const res = await get(server, '/boom');
    expect(res.status).toBe(500);
    expect(res.body).not.toContain('boom');
  });

  it('stops listening on close, also with a keep-alive connection open', async () => {
    const server = await start();
    await get(server, '/healthz');
    await server.close();
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});
