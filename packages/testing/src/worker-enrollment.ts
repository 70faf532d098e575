/**
 * Enrolled workers for tests that start real worker processes (issue #44): an enrollment made
 * through a running admin-api (`POST /api/v1/workers/enrollments`, which makes its RabbitMQ and
 * Redis users), its credential written to a 0600 file, and the environment of a worker started
 * from that file alone — the server URLs without any login, no master secret, no MySQL — as
 * deploy/enroll-workers.mjs gives production workers.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startService, type ManagedProcess } from './processes.js';

/** An enrollment and the file holding its credential. */
export interface TestEnrollment {
  readonly id: string;
  readonly credentialFile: string;
}

/** Creates enrollment `name` for `teams` at `adminUrl` with an admin token and writes its credential (mode 0600) to `credentialFile`. */
export async function createTestEnrollment(options: { adminUrl: string; adminToken: string; name: string; teams: readonly string[]; credentialFile: string }): Promise<TestEnrollment> {
  const res = await fetch(`${options.adminUrl}/api/v1/workers/enrollments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: options.name, teams: options.teams }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`creating worker enrollment ${options.name} answered ${res.status}: ${text}`);
  const created = JSON.parse(text) as { id: string; credential: string };
  writeFileSync(options.credentialFile, `${created.credential}\n`, { mode: 0o600 });
  return { id: created.id, credentialFile: options.credentialFile };
}

/** `url` (or a comma list of URLs) with its login removed: an enrolled worker adds its enrollment's own. */
export function withoutLogin(urls: string): string {
  return urls
    .split(',')
    .map((one) => {
      const u = new URL(one.trim());
      u.username = '';
      u.password = '';
      return u.toString().replace(/\/$/, '');
    })
    .join(',');
}

/**
 * The variables of an enrolled worker built from a service environment `env`: its credential
 * file and admin-api's URL; the Redis and RabbitMQ URLs without logins; the master secret and the
 * MySQL URL removed (set to undefined, so nothing inherited brings them back).
 */
export function enrolledWorkerEnv(env: Readonly<Record<string, string | undefined>>, enrollment: TestEnrollment, adminUrl: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env, AX_WORKER_CREDENTIAL_FILE: enrollment.credentialFile, AX_ADMIN_URL: adminUrl, AX_EXECUTOR_SECRET: undefined, AX_MYSQL_URL: undefined };
  for (const key of ['AX_REDIS_URL', 'AX_AMQP_URL']) {
    const value = env[key];
    if (value !== undefined) out[key] = withoutLogin(value);
  }
  return out;
}

/** An admin-api with one enrollment, for starting enrolled workers ({@link startWorkerEnrollment}). */
export interface WorkerEnrollment {
  readonly adminApi: ManagedProcess & { readonly baseUrl: string };
  readonly enrollment: TestEnrollment;
  /** The full id of the worker started with AX_WORKER_ID `localId`: `<enrollment id>.<localId>`. */
  workerId(localId: string): string;
  /** The environment of an enrolled worker: {@link enrolledWorkerEnv} of the services' `env`, plus `extra`. */
  workerEnv(extra?: Readonly<Record<string, string | undefined>>): Record<string, string | undefined>;
}

/**
 * Starts an admin-api with the services' environment `env` (which must hold the master secret
 * AX_EXECUTOR_SECRET the brokers share, and AX_AMQP_MANAGEMENT_URL unless RabbitMQ's management
 * API is on the first AX_AMQP_URL host's port 15672) and makes one enrollment of `teams`
 * (default `default`, the team of tasks that name none); its credential goes to
 * `<dir>/worker-credential`.
 */
export async function startWorkerEnrollment(options: { env: Readonly<Record<string, string | undefined>>; dir: string; teams?: readonly string[]; name?: string }): Promise<WorkerEnrollment> {
  if (options.env.AX_EXECUTOR_SECRET === undefined) throw new Error('startWorkerEnrollment: env.AX_EXECUTOR_SECRET is required (admin-api derives the enrollment logins from it; brokers need the same)');
  const adminToken = `axt_test_enroll_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  const adminApi = await startService('admin-api', { name: 'admin-api', env: { ...options.env, AX_ADMIN_TOKEN: adminToken } });
  const enrollment = await createTestEnrollment({
    adminUrl: adminApi.baseUrl,
    adminToken,
    name: options.name ?? 'test-workers',
    teams: options.teams ?? ['default'],
    credentialFile: path.join(options.dir, 'worker-credential'),
  });
  const base = enrolledWorkerEnv(options.env, enrollment, adminApi.baseUrl);
  return {
    adminApi,
    enrollment,
    workerId: (localId) => `${enrollment.id}.${localId}`,
    workerEnv: (extra = {}) => ({ ...base, ...extra, ...(extra.AX_AMQP_URL !== undefined ? { AX_AMQP_URL: withoutLogin(extra.AX_AMQP_URL) } : {}), ...(extra.AX_REDIS_URL !== undefined ? { AX_REDIS_URL: withoutLogin(extra.AX_REDIS_URL) } : {}) }),
  };
}
