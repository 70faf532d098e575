// deploy/docker-compose.yml, checked without a Docker engine: `docker-compose config` validates
// and resolves it (with the placeholders of deploy/.env.example and the credential files
// deploy/write-credentials.sh makes of them), then the resolved model is checked for what the
// stack needs. Locally the check is skipped when the binary is missing; in CI (CI=true) a
// missing binary fails it.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axServiceFields, ConfigError, loadConfig, type ServiceName } from '@ax/kit';
import { missingRequirement } from '@ax/testing';
import { COMPOSE, compose, credentialsIn, resolveCompose, type ComposeModel } from './compose-model.js';
import { arr, deployDir, hasCommand, IMAGE_TARGETS, knownAxVariables, obj, parseDockerfile, readRepoFile } from './support.js';

const composeFile = path.join(deployDir, 'docker-compose.yml');

/** A published port of the resolved model: host address (undefined = every interface), host port, container port. */
interface PublishedPort {
  readonly hostIp: string | undefined;
  readonly published: string;
  readonly target: string;
}

/**
 * The published ports of a resolved service. docker-compose v1 prints a port with a host address
 * in the short form (`127.0.0.1:15672:15672/tcp`) and one without in the long form
 * (`{published, target}`); v2 prints the long form with `host_ip`.
 */
function publishedPorts(service: Record<string, unknown> | undefined, name: string): PublishedPort[] {
  return arr(service?.ports ?? [], `${name}.ports`).map((p) => {
    if (typeof p === 'string' || typeof p === 'number') {
      // [host:][published:]target[/protocol]; an IPv6 host is bracketed.
      const m = /^(?:(\[[^\]]+\]|[^:[\]]*):(?=[^:]*:))?(?:([\d-]*):)?([\d-]+)(?:\/\w+)?$/.exec(String(p));
      if (m === null) throw new Error(`${name}: cannot read port ${JSON.stringify(p)}`);
      return { hostIp: m[1] === undefined || m[1] === '' ? undefined : m[1], published: m[2] ?? '', target: m[3] ?? '' };
    }
    const long = obj(p, `${name} port`);
    const scalar = (v: unknown, what: string): string => {
      if (v === undefined) return '';
      if (typeof v === 'string' || typeof v === 'number') return String(v);
      throw new Error(`${name}: port ${what} is ${JSON.stringify(v)}`);
    };
    const hostIp = scalar(long.host_ip, 'host_ip');
    return { hostIp: hostIp === '' ? undefined : hostIp, published: scalar(long.published, 'published'), target: scalar(long.target, 'target') };
  });
}

const LOOPBACK = ['127.0.0.1', '::1', '[::1]'];

describe('deploy/docker-compose.yml', () => {
  describe.skipIf(missingRequirement(it, { name: COMPOSE, present: hasCommand(COMPOSE), install: 'apt-get install docker-compose' }))('resolved by docker-compose config', () => {
    let model: ComposeModel | undefined;
    let services: Record<string, Record<string, unknown>> = {};
    let volumes: Record<string, unknown> = {};

    beforeAll(async () => {
      model = await resolveCompose();
      ({ services, volumes } = model);
    });
    afterAll(async () => model?.cleanup());

    const env = (name: string): Record<string, string> => model?.env(name) ?? {};
    const axServices = ['scheduler-1', 'scheduler-2', 'broker', 'worker-1', 'worker-2', 'admin-api'];
    /** Every container of an ax image (built from deploy/Dockerfile): the services, the one-shots, the example. */
    const axImages = (): string[] => Object.keys(services).filter((name) => services[name]?.build !== undefined);

    it('runs MySQL 8, Redis 7, RabbitMQ 3 with management, each health-checked', () => {
      expect(services.mysql?.image).toMatch(/^mysql:8\.\d+$/);
      expect(services.redis?.image).toMatch(/^redis:7\.\d+/);
      expect(services.rabbitmq?.image).toMatch(/^rabbitmq:3\.\d+-management$/);
      for (const name of ['mysql', 'redis', 'rabbitmq']) expect(services[name]?.healthcheck, name).toBeDefined();
    });

    it('has 2 schedulers, 1 broker, 2 workers (one tagged), the admin API on 8080 and the example executor', () => {
      const byTarget = (target: string) => Object.keys(services).filter((k) => obj(services[k]?.build ?? {}, k).target === target);
      expect(byTarget('scheduler')).toHaveLength(2);
      expect(byTarget('broker')).toHaveLength(1);
      expect(byTarget('worker')).toHaveLength(2);
      expect(byTarget('admin-api').filter((n) => n !== 'enroll-workers')).toHaveLength(1);
      expect(byTarget('example-business-service')).toHaveLength(1);
      expect(byTarget('migrate')).toHaveLength(1);
      const tags = ['worker-1', 'worker-2'].map((w) => env(w).AX_WORKER_TAGS ?? '').filter((t) => t !== '');
      expect(tags).toHaveLength(1);
      const ports = publishedPorts(services['admin-api'], 'admin-api');
      expect(ports.some((p) => p.published === '8080' && p.target === '8080')).toBe(true);
    });

    it('publishes the admin API on 127.0.0.1 only by default', () => {
      expect(publishedPorts(services['admin-api'], 'admin-api')).toEqual([{ hostIp: '127.0.0.1', published: '8080', target: '8080' }]);
    });

    it('publishes no port of any service on every interface by default', () => {
      const published = Object.entries(services).flatMap(([name, service]) => publishedPorts(service, name).map((p) => ({ name, ...p })));
      expect(published.length).toBeGreaterThan(0);
      for (const p of published) expect(LOOPBACK, `${p.name} publishes ${p.published} on ${p.hostIp ?? 'every interface'}`).toContain(p.hostIp);
    });

    it('publishes the admin API on the address of AX_ADMIN_BIND when it is set', async () => {
      const bound = await resolveCompose([], 'AX_ADMIN_BIND=0.0.0.0');
      try {
        expect(publishedPorts(bound.services['admin-api'], 'admin-api')).toEqual([{ hostIp: '0.0.0.0', published: '8080', target: '8080' }]);
      } finally {
        await bound.cleanup();
      }
    });

    it('every ax service refuses the placeholders of .env.example (NODE_ENV=production), naming each secret it was given', () => {
      const secretVariables = ['AX_MYSQL_URL', 'AX_REDIS_URL', 'AX_AMQP_URL', 'AX_AMQP_MANAGEMENT_URL', 'AX_ADMIN_TOKEN', 'AX_EXECUTOR_SECRET'];
      for (const name of axServices.filter((n) => !n.startsWith('worker-'))) {
        // as the container reads it: each <NAME>_FILE is the file write-credentials.sh made of .env.example
        const e = model?.hostEnv(name) ?? {};
        const service = name.replace(/-\d+$/, '') as ServiceName;
        const given = secretVariables.filter((v) => e[`${v}_FILE`] !== undefined);
        expect(given, `${name} gets secrets`).not.toEqual([]);
        let refused: string[] = [];
        try {
          loadConfig(axServiceFields(service), e);
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          refused = error.issues.map((i) => i.variable);
        }
        expect(refused.sort(), name).toEqual(given.sort());
      }
    });

    it('#44 R24/R25: workers are enrolled and hold no credential of the stack: no master secret, no admin token, no MySQL, no login in their server URLs', async () => {
      for (const name of ['worker-1', 'worker-2']) {
        const e = env(name);
        for (const v of ['AX_EXECUTOR_SECRET', 'AX_ADMIN_TOKEN', 'AX_MYSQL_URL', 'AX_ALERT_WEBHOOK_URL']) expect(e[v], `${name} ${v}`).toBeUndefined();
        for (const v of ['AX_AMQP_URL', 'AX_REDIS_URL']) {
          const url = new URL(String(e[v]));
          expect([url.username, url.password], `${name} ${v} carries a login`).toEqual(['', '']);
        }
        expect(e.AX_ADMIN_URL, name).toBe('http://admin-api:8080');
        expect(e.AX_WORKER_CREDENTIAL_FILE, name).toBe(`/run/ax-workers/${name}.credential`);
        // and its configuration loads as it is: nothing it lacks is required of an enrolled worker
        loadConfig(axServiceFields('worker'), e);
        const mounts = arr(services[name]?.volumes, `${name}.volumes`).map((v) => String(v));
        expect(mounts, name).toContain('worker-credentials:/run/ax-workers:ro');
        expect(obj(obj(services[name]?.depends_on, `${name}.depends_on`)['enroll-workers'], `${name} → enroll-workers`).condition).toBe('service_completed_successfully');
      }
      const enroll = services['enroll-workers'];
      expect(enroll?.restart).toBe('no');
      expect(arr(enroll?.entrypoint, 'enroll-workers.entrypoint')).toEqual(['node', 'enroll-workers.mjs', '/run/ax-workers', 'worker-1:*:', 'worker-2:*:gpu']);
      expect(obj(obj(enroll?.depends_on, 'enroll-workers.depends_on')['admin-api'], 'enroll-workers → admin-api').condition).toBe('service_healthy');
      // worker-2 is tagged gpu, and so is its enrollment (a worker may offer only its enrollment's tags)
      expect(env('worker-2').AX_WORKER_TAGS).toBe('gpu');
      expect(env('admin-api').AX_EXECUTOR_SECRET_FILE).toBeDefined();
      const management = model?.secretFile('admin-api', 'AX_AMQP_MANAGEMENT_URL_FILE');
      expect(management !== undefined && 'file' in management, JSON.stringify(management)).toBe(true);
      expect((await readFile(management !== undefined && 'file' in management ? management.file : '', 'utf8')).trim()).toMatch(/^http:\/\/ax:.*@rabbitmq:15672$/);
    });

    it('#44 gives no container of an ax image a credential in its environment: every one is a compose secret read through <NAME>_FILE', () => {
      const images = axImages();
      expect(images).toEqual(expect.arrayContaining([...axServices, 'migrate', 'enroll-workers', 'example-business-service']));
      for (const name of images) {
        expect(credentialsIn(env(name)), `${name} has credentials in its environment`).toEqual([]);
        for (const variable of Object.keys(env(name)).filter((k) => k.endsWith('_FILE') && k !== 'AX_WORKER_CREDENTIAL_FILE')) {
          expect(model?.secretFile(name, variable), `${name} ${variable}`).toHaveProperty('file');
        }
      }
      // each gets only the secrets it reads
      const mounted = (name: string): string[] => arr(services[name]?.secrets ?? [], `${name}.secrets`).map((s) => String(obj(s, 'secret').source)).sort();
      expect(mounted('scheduler-1')).toEqual(['AX_MYSQL_URL', 'AX_REDIS_URL']);
      expect(mounted('broker')).toEqual(['AX_AMQP_URL', 'AX_MYSQL_URL', 'AX_REDIS_URL']);
      expect(mounted('migrate')).toEqual(['AX_MYSQL_URL']);
      expect(mounted('enroll-workers')).toEqual(['AX_ADMIN_TOKEN']);
      expect(mounted('example-business-service')).toEqual(['AX_EXECUTOR_SECRET']);
      for (const worker of ['worker-1', 'worker-2']) expect(mounted(worker), worker).toEqual([]);
      // the files are deploy/credentials/<NAME> by default, never committed
      expect(readRepoFile('deploy/.gitignore').split('\n')).toContain('credentials/*');
    });

    it('starts every ax service only after the migration completed successfully', () => {
      expect(services.migrate?.restart).toBe('no');
      for (const name of [...axServices]) {
        const depends = obj(services[name]?.depends_on, `${name}.depends_on`);
        expect(obj(depends.migrate, `${name} → migrate`).condition, name).toBe('service_completed_successfully');
        expect(obj(depends.redis, `${name} → redis`).condition, name).toBe('service_healthy');
        expect(obj(depends.rabbitmq, `${name} → rabbitmq`).condition, name).toBe('service_healthy');
      }
      expect(obj(obj(services.migrate?.depends_on, 'migrate.depends_on').mysql, 'migrate → mysql').condition).toBe('service_healthy');
    });

    it('health-checks every ax service on /healthz and gives it more than AX_SHUTDOWN_GRACE_S to stop', () => {
      for (const name of axServices) {
        const test = arr(obj(services[name]?.healthcheck, `${name}.healthcheck`).test, `${name}.healthcheck.test`).join(' ');
        expect(test, name).toMatch(/fetch\(.*\/healthz/);
        const graceS = Number(env(name).AX_SHUTDOWN_GRACE_S ?? '30');
        const stopS = Number(/^(\d+)s$/.exec(String(services[name]?.stop_grace_period))?.[1]);
        expect(stopS, `${name} stop_grace_period`).toBeGreaterThanOrEqual(graceS + 10);
      }
    });

    it('limits the memory of every ax service and caps its V8 heap at 50-75 % of it, semi-spaces at 16 MB (as deploy/k8s does)', () => {
      // docker-compose v1 prints mem_limit as written (`512m`), v2 in bytes.
      const mib = (v: unknown): number => {
        const m = /^(\d+)([kmg]?)b?$/i.exec(String(v));
        if (m === null) throw new Error(`mem_limit ${String(v)} is not a size`);
        const factor = { '': 1 / 1024 / 1024, k: 1 / 1024, m: 1, g: 1024 }[(m[2] ?? '').toLowerCase()] ?? Number.NaN;
        return Number(m[1]) * factor;
      };
      for (const name of axServices) {
        const limit = mib(services[name]?.mem_limit);
        const options = String(env(name).NODE_OPTIONS);
        const cap = Number(/--max-old-space-size=(\d+)/.exec(options)?.[1]);
        expect(cap, `${name} NODE_OPTIONS --max-old-space-size`).toBeGreaterThanOrEqual(limit * 0.5);
        expect(cap, name).toBeLessThanOrEqual(limit * 0.75);
        const semi = Number(/--max-semi-space-size=(\d+)/.exec(options)?.[1]);
        expect(semi, `${name} NODE_OPTIONS --max-semi-space-size`).toBeLessThanOrEqual(16);
        expect(cap + 3 * semi, name).toBeLessThanOrEqual(limit * 0.85);
      }
    });

    it('#44 R25: workers get no MySQL, run as root with only the capabilities that switch to the teams\' job uids (AX_JOB_UIDS)', () => {
      for (const name of ['worker-1', 'worker-2']) {
        const service = services[name];
        expect(env(name).AX_MYSQL_URL, name).toBeUndefined();
        expect(env(name).AX_JOB_UIDS, name).toMatch(/^[a-z][a-z0-9_-]*=\d+/);
        expect(service?.user, name).toBe('0:0');
        expect(service?.cap_drop, name).toEqual(['ALL']);
        expect([...arr(service?.cap_add, `${name}.cap_add`)].sort(), name).toEqual(['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'SETGID', 'SETUID']);
      }
      for (const name of axServices.filter((n) => !n.startsWith('worker-'))) expect(env(name).AX_MYSQL_URL_FILE, name).toBeDefined();
    });

    it('gives each worker a stable id and its own outbox volume', () => {
      const ids = new Set<string>();
      for (const name of ['worker-1', 'worker-2']) {
        const e = env(name);
        expect(e.AX_WORKER_ID, name).toBeTruthy();
        ids.add(e.AX_WORKER_ID ?? '');
        const mounts = arr(services[name]?.volumes, `${name}.volumes`).map((v) => String(v));
        expect(mounts.some((m) => m.startsWith(`${name}-data:${e.AX_WORKER_DATA_DIR}`)), `${name} volume`).toBe(true);
        expect(volumes).toHaveProperty(`${name}-data`);
      }
      expect(ids.size).toBe(2);
    });

    it('#18 secrets: mounts deploy/secrets read-only at AX_SECRETS_DIR in every worker, and in no other service', () => {
      for (const name of ['worker-1', 'worker-2']) {
        const dir = env(name).AX_SECRETS_DIR;
        expect(dir, name).toBe('/run/ax-secrets');
        const mounts = arr(services[name]?.volumes, `${name}.volumes`).filter((v) => typeof v === 'object').map((v) => obj(v, `${name}.volume`));
        expect(mounts, name).toContainEqual(expect.objectContaining({ type: 'bind', target: dir, read_only: true, source: path.join(deployDir, 'secrets') }));
      }
      for (const name of axServices.filter((n) => !n.startsWith('worker-'))) expect(env(name).AX_SECRETS_DIR, name).toBeUndefined();
    });

    it('builds images from deploy/Dockerfile targets that exist, tagged with a version', () => {
      const targets = new Set(parseDockerfile(readRepoFile('deploy/Dockerfile')).stages.map((s) => s.name));
      for (const [name, service] of Object.entries(services)) {
        expect(String(service.image), `${name} image`).not.toMatch(/:latest$/);
        expect(String(service.image), `${name} image has a tag`).toMatch(/:[\w.-]+$/);
        if (service.build === undefined) continue;
        const build = obj(service.build, `${name}.build`);
        expect(build.dockerfile).toBe('deploy/Dockerfile');
        expect(targets, `${name} target`).toContain(build.target);
        expect(IMAGE_TARGETS as readonly unknown[]).toContain(build.target);
        expect(service.image).toBe(`ax/${String(build.target)}:0.1.0`);
      }
    });

    it('sets AX_HTTP_EXECUTOR_ALLOW where NODE_ENV=production requires it (workers, admin API)', () => {
      for (const name of ['worker-1', 'worker-2', 'admin-api']) {
        expect(env(name).NODE_ENV, name).toBe('production');
        expect(env(name).AX_HTTP_EXECUTOR_ALLOW, name).toBeTruthy();
      }
    });

    it('sets only variables the code reads, in every ax service', () => {
      const known = knownAxVariables();
      for (const name of [...axServices, 'migrate', 'example-business-service']) {
        for (const key of Object.keys(env(name))) if (key.startsWith('AX_')) expect(known, `${name} sets ${key}`).toContain(key);
      }
    });

    it('refuses to start without the secrets of deploy/.env', async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'ax-compose-'));
      const emptyEnv = path.join(dir, 'empty.env');
      await writeFile(emptyEnv, '# no secrets\n');
      const failed = await compose(['--env-file', emptyEnv, '-f', composeFile, 'config'])
        .then(
          () => undefined,
          (error: unknown) => error as { stderr?: string },
        )
        .finally(() => rm(dir, { recursive: true, force: true }));
      expect(failed, 'docker-compose config succeeded without secrets').toBeDefined();
      expect(failed?.stderr).toMatch(/set AX_[A-Z_]+ in deploy\/\.env|MYSQL_ROOT_PASSWORD/);
    });
  });

  it('commits placeholders only: every secret in .env.example carries the CHANGE_ME marker (refused in production)', () => {
    const lines = readRepoFile('deploy/.env.example').split('\n').filter((l) => /^[A-Z_]+=/.test(l));
    const values = new Map(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    for (const key of ['MYSQL_ROOT_PASSWORD', 'AX_MYSQL_PASSWORD', 'AX_REDIS_PASSWORD', 'AX_RABBITMQ_PASSWORD', 'AX_ADMIN_TOKEN', 'AX_EXECUTOR_SECRET']) {
      expect(values.get(key), key).toMatch(/change[-_]me/i);
    }
    // Passwords go into URLs unencoded: URL-safe characters only.
    for (const key of ['AX_MYSQL_PASSWORD', 'AX_REDIS_PASSWORD', 'AX_RABBITMQ_PASSWORD']) expect(values.get(key), key).toMatch(/^[A-Za-z0-9._-]+$/);
    expect(readRepoFile('.gitignore').split('\n').concat(readRepoFile('deploy/.gitignore').split('\n'))).toContain('.env');
  });
});
