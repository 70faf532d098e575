/**
 * The bench's workers log in the way production's do (issue #44, DESIGN R24/R25, docs/deploy.md):
 * one admin-api in the round, one enrollment made through `POST /api/v1/workers/enrollments` by
 * deploy/enroll-workers.mjs (the `enroll-workers` one-shot of the compose file), its credential in
 * a 0600 file, and every worker started with that file and `AX_ADMIN_URL` only — no executor
 * secret, no MySQL/Redis/RabbitMQ URL or service login. The round deletes the enrollment's
 * RabbitMQ and Redis users when it ends (the shared servers are left clean).
 *
 * `AX_BENCH_WORKER_LOGIN=service` starts them the way the bench did before #44 (the executor
 * secret and the service logins); that is also the default of a `--baseline` round, which
 * measures an older tree as it was measured then.
 */
import { randomBytes } from 'node:crypto';
import { enrollWorker } from '../../deploy/enroll-workers.mjs';
import { defaultManagementUrl, deleteEnrollmentBusUser, vhostOfAmqpUrl } from '../../packages/bus/dist/index.js';
import { redisKeys } from '../../packages/kit/dist/index.js';
import { deleteEnrollmentRedisUser } from '../../packages/redis/dist/index.js';

const LOGINS = ['enrollment', 'service'];

/**
 * How a round's workers log in: `AX_BENCH_WORKER_LOGIN` when set, else `enrollment` for this
 * tree's code and `service` for a baseline tree. Bad values exit with one line.
 */
export function workerLoginOf(env, baselineRound) {
  const set = env.AX_BENCH_WORKER_LOGIN;
  if (set === undefined || set === '') return baselineRound ? 'service' : 'enrollment';
  if (!LOGINS.includes(set)) {
    process.stderr.write(`AX_BENCH_WORKER_LOGIN=${JSON.stringify(set)}: expected one of ${LOGINS.join(', ')}\n`);
    process.exit(2);
  }
  return set;
}

/** The one enrollment of a round; its team is the one the bench's tasks belong to. */
const SPEC = { name: 'bench-workers', teams: ['default'], tags: [] };

/** A bootstrap admin token of the round's own (admin-api's AX_ADMIN_TOKEN). */
export function roundAdminToken() {
  return `axt_bench_${randomBytes(16).toString('hex')}`;
}

/** Where admin-api makes (and the round deletes) the enrollment's RabbitMQ user. */
export function busAdminOf(amqpUrl) {
  return { managementUrl: process.env.AX_AMQP_MANAGEMENT_URL || defaultManagementUrl(amqpUrl), vhost: vhostOfAmqpUrl(amqpUrl) };
}

/** Enrolls the round's workers through `adminUrl`; the credential goes to `<dir>/bench-workers.credential` (0600). */
export async function enrollBenchWorkers({ adminUrl, token, dir }) {
  const { id, file } = await enrollWorker({ adminUrl, token, dir, spec: SPEC });
  return { id, file, adminUrl };
}

/**
 * The environment of an enrolled worker on top of the round's: its credential file and admin-api,
 * and none of the secrets and logins a service-login worker gets (undefined removes a variable
 * the bench itself may have been started with).
 */
export function enrolledWorkerEnv(enrollment) {
  return {
    AX_WORKER_CREDENTIAL_FILE: enrollment.file,
    AX_ADMIN_URL: enrollment.adminUrl,
    AX_EXECUTOR_SECRET: undefined,
    AX_MYSQL_URL: undefined,
    AX_REDIS_URL: undefined,
    AX_AMQP_URL: undefined,
  };
}

/** The id a worker of `enrollment` registers under for its local `AX_WORKER_ID` (R24: `<eid>.<local>`). */
export function enrolledWorkerId(enrollment, localId) {
  return enrollment === undefined ? localId : `${enrollment.id}.${localId}`;
}

/**
 * Deletes the enrollment's RabbitMQ user (closing its connections) and Redis ACL user with its
 * registry entries — what a revoke through the API does — once the round's processes are gone.
 */
export async function deleteEnrollmentLogins({ enrollment, amqpUrl, redis, namespace }) {
  await deleteEnrollmentBusUser(busAdminOf(amqpUrl), namespace, enrollment.id);
  await deleteEnrollmentRedisUser(redis, redisKeys(namespace), enrollment.id);
}
