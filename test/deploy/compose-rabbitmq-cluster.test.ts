// deploy/docker-compose.rabbitmq-cluster.yml on top of docker-compose.yml, resolved by
// `docker-compose config` (no Docker engine): three RabbitMQ nodes sharing a cookie and a
// cluster configuration, and every AMQP service given the three node URLs, which it accepts:
// the broker and admin API in their credential file, the enrolled workers without a login.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axServiceFields, loadConfig } from '@ax/kit';
import { missingRequirement } from '@ax/testing';
import { COMPOSE, credentialsIn, resolveCompose, type ComposeModel } from './compose-model.js';
import { hasCommand, readRepoFile } from './support.js';

const AMQP_SERVICES = ['broker', 'worker-1', 'worker-2', 'admin-api'];
const NODES = ['rabbitmq', 'rabbitmq-2', 'rabbitmq-3'];

describe.skipIf(missingRequirement(it, { name: COMPOSE, present: hasCommand(COMPOSE), install: 'apt-get install docker-compose' }))('deploy/docker-compose.rabbitmq-cluster.yml', () => {
  let model: ComposeModel | undefined;
  let services: Record<string, Record<string, unknown>> = {};

  beforeAll(async () => {
    model = await resolveCompose(['docker-compose.rabbitmq-cluster.yml']);
    services = model.services;
  });
  afterAll(async () => model?.cleanup());

  const env = (name: string): Record<string, string> => model?.env(name) ?? {};

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

  it('#23 gives every AMQP service the three node URLs, which each accepts; #44 as a credential file, or without a login to an enrolled worker', () => {
    for (const name of AMQP_SERVICES) {
      // as the container reads it (the broker and admin API: AX_AMQP_URL_FILE, the secret's file)
      const urls = loadConfig(axServiceFields('broker'), { ...(model?.hostEnv(name) ?? {}), NODE_ENV: 'development' }).amqpUrl;
      expect(urls.map((u) => new URL(u).hostname), name).toEqual(NODES);
      expect(credentialsIn(env(name)), `${name} has credentials in its environment`).toEqual([]);
      const logins = urls.map((u) => new URL(u).username);
      expect(logins, name).toEqual(name.startsWith('worker-') ? ['', '', ''] : ['ax', 'ax', 'ax']);
    }
  });
});
