// deploy/docker-compose.redis-sentinel.yml on top of docker-compose.yml, resolved by
// `docker-compose config` (no Docker engine): a replica and three sentinels, and every ax
// service reaching Redis through them with a configuration the services accept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axServiceFields, loadConfig } from '@ax/kit';
import { missingRequirement } from '@ax/testing';
import { COMPOSE, resolveCompose, type ComposeModel } from './compose-model.js';
import { hasCommand } from './support.js';

const AX_SERVICES = ['scheduler-1', 'scheduler-2', 'broker', 'worker-1', 'worker-2', 'admin-api'];

describe.skipIf(missingRequirement(it, { name: COMPOSE, present: hasCommand(COMPOSE), install: 'apt-get install docker-compose' }))('deploy/docker-compose.redis-sentinel.yml', () => {
  let model: ComposeModel | undefined;
  let services: Record<string, Record<string, unknown>> = {};

  beforeAll(async () => {
    model = await resolveCompose(['docker-compose.redis-sentinel.yml']);
    services = model.services;
  });
  afterAll(async () => model?.cleanup());

  const env = (name: string): Record<string, string> => model?.env(name) ?? {};

  it('adds a replica of the primary and three sentinels monitoring it under one name with quorum 2', () => {
    expect(String(services['redis-replica']?.command)).toContain('--replicaof,redis,6379');
    for (const n of [1, 2, 3]) {
      const script = (services[`redis-sentinel-${n}`]?.entrypoint as string[] | undefined)?.join(' ') ?? '';
      expect(script, `redis-sentinel-${n}`).toContain('sentinel monitor axredis redis 6379 2');
    }
  });

  it('points every ax service at the three sentinels, and each service accepts its configuration', () => {
    for (const name of AX_SERVICES) {
      const e = env(name);
      expect(e.AX_REDIS_SENTINELS?.split(','), name).toEqual(['redis-sentinel-1:26379', 'redis-sentinel-2:26379', 'redis-sentinel-3:26379']);
      expect(e.AX_REDIS_SENTINEL_NAME, name).toBe('axredis');
      for (const hostPort of e.AX_REDIS_SENTINELS?.split(',') ?? []) expect(Object.keys(services)).toContain(hostPort.split(':')[0]);
    }
    // as the container reads it: AX_REDIS_URL_FILE is the secret's file
    const config = loadConfig(axServiceFields('broker'), { ...(model?.hostEnv('broker') ?? {}), NODE_ENV: 'development' });
    expect(config.redisSentinels).toHaveLength(3);
    expect(config.redisSentinelName).toBe('axredis');
  });
});
