// deploy/docker-compose.rabbitmq-cluster.yml on top of docker-compose.yml, resolved by
// `docker-compose config` (no Docker engine): three RabbitMQ nodes sharing a cookie and a
// cluster configuration, and every AMQP service given the three node URLs, which it accepts.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { axServiceFields, loadConfig } from '@ax/kit';
import { missingRequirement } from '@ax/testing';
import { deployDir, hasCommand, obj, parseYamlDocuments, readRepoFile } from './support.js';

const run = promisify(execFile);
const COMPOSE = 'docker-compose';
const AMQP_SERVICES = ['broker', 'worker-1', 'worker-2', 'admin-api'];
const NODES = ['rabbitmq', 'rabbitmq-2', 'rabbitmq-3'];

describe.skipIf(missingRequirement(it, { name: COMPOSE, present: hasCommand(COMPOSE), install: 'apt-get install docker-compose' }))('deploy/docker-compose.rabbitmq-cluster.yml', () => {
  let services: Record<string, Record<string, unknown>> = {};

  beforeAll(async () => {
    const { stdout } = await run(
      COMPOSE,
      ['--env-file', path.join(deployDir, '.env.example'), '-f', path.join(deployDir, 'docker-compose.yml'), '-f', path.join(deployDir, 'docker-compose.rabbitmq-cluster.yml'), 'config'],
      { cwd: deployDir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, timeout: 60_000 },
    );
    const model = obj(parseYamlDocuments(stdout, 'docker-compose config')[0], 'config');
    services = Object.fromEntries(Object.entries(obj(model.services, 'services')).map(([k, v]) => [k, obj(v, k)]));
  });

  const env = (name: string): Record<string, string> => obj(services[name]?.environment ?? {}, `${name}.environment`) as Record<string, string>;

  it('#23 runs three nodes with one Erlang cookie, each its own volume and the cluster configuration naming all three', () => {
    const cookies = new Set(NODES.map((n) => env(n).RABBITMQ_ERLANG_COOKIE));
    expect(cookies.size).toBe(1);
    expect([...cookies][0]).toMatch(/change[-_]me/i);
    const conf = readRepoFile('deploy/rabbitmq/cluster.conf');
    for (const node of NODES) {
      expect(String(services[node]?.hostname), node).toBe(node);
      expect(conf, node).toContain(`= rabbit@${node}`);
      const volumes = JSON.stringify(services[node]?.volumes ?? []);
      expect(volumes, node).toContain('/etc/rabbitmq/conf.d/20-ax-cluster.conf');
      expect(volumes, node).toContain('/var/lib/rabbitmq');
    }
    expect(new Set(NODES.map((n) => JSON.stringify((services[n]?.volumes as Array<{ source?: string }> | undefined)?.find((v) => JSON.stringify(v).includes('/var/lib/rabbitmq'))))).size).toBe(3);
    expect(conf).toContain('cluster_partition_handling = pause_minority');
  });

  it('#23 gives every AMQP service the three node URLs, which each accepts', () => {
    for (const name of AMQP_SERVICES) {
      const urls = env(name).AX_AMQP_URL?.split(',') ?? [];
      expect(urls.map((u) => new URL(u).hostname), name).toEqual(NODES);
    }
    const config = loadConfig(axServiceFields('broker'), { ...env('broker'), NODE_ENV: 'development' });
    expect(config.amqpUrl).toHaveLength(3);
  });
});
