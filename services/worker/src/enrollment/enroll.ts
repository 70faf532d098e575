/**
 * An enrolled worker's start-up (ADMIN-API.md "Workers", ENROLLMENT-CONTRACT point 1): ask
 * admin-api for the enrollment of the credential, then derive everything the worker connects
 * and runs with from the answer and from nothing the worker says about itself — its id
 * (`<enrollment id>.<AX_WORKER_ID>`), the teams it serves, the RabbitMQ and Redis logins (on the
 * hosts of AX_AMQP_URL / AX_REDIS_URL) and the executor keys. A start-up that cannot be right
 * (credential refused, an answer that is no enrollment, no teams, AX_WORKER_TEAMS outside the
 * enrollment) is one line for the caller to print before exit code 2, with nothing connected
 * yet. admin-api not answering is waited for (it may be starting too).
 */
import { enrolledWorkerId } from '@ax/core';
import { toError, WORKER_ID_PATTERN, type Logger } from '@ax/kit';
import { describeScope, narrowTeams, tagsProblem, withLogin, type BootstrapAnswer, type TeamScope } from './bootstrap-answer.js';
import { fetchEnrollment, type EnrollmentFetch } from './enrollment-client.js';

/** What an enrolled worker runs with. */
export interface Enrolled {
  readonly answer: BootstrapAnswer;
  readonly enrollmentId: string;
  /** `<enrollment id>.<local id>`. */
  readonly workerId: string;
  readonly teams: TeamScope;
  /** AX_AMQP_URL's nodes with the enrollment's RabbitMQ login. */
  readonly amqpUrls: readonly string[];
  /** AX_REDIS_URL with the enrollment's Redis login. */
  readonly redisUrl: string;
}

/** Inputs of `enroll` (from the parsed environment). */
export interface EnrollInput {
  readonly credential: { readonly file: string; readonly credential: string; readonly enrollmentId: string };
  readonly adminUrl: string;
  /** AX_WORKER_ID (or the host name): the local part of the worker id. */
  readonly localId: string;
  /** AX_WORKER_TEAMS. */
  readonly requestedTeams: readonly string[];
  /** AX_WORKER_TAGS: must be among the enrollment's tags when it names any. */
  readonly tags: readonly string[];
  readonly amqpUrls: readonly string[];
  readonly redisUrl: string;
  readonly logger: Logger;
  /** Asks admin-api once; default `fetchEnrollment`. */
  readonly fetch?: () => Promise<EnrollmentFetch>;
}

/** The enrolled start-up, or the one line saying why the worker must not start. */
export async function enroll(input: EnrollInput): Promise<{ ok: true; enrolled: Enrolled } | { ok: false; line: string }> {
  const { credential, adminUrl, logger } = input;
  const ask = input.fetch ?? (() => fetchEnrollment({ adminUrl, credential: credential.credential }));
  let got: EnrollmentFetch;
  for (let attempt = 0; ; attempt++) {
    got = await ask();
    if (got.kind !== 'unreachable') break;
    const delayMs = Math.round(Math.min(10_000, 500 * 2 ** Math.min(attempt, 5)) * (0.8 + Math.random() * 0.4));
    logger.warn({ problem: got.problem, retryInMs: delayMs }, 'admin-api did not give the enrollment; asking again');
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  const eid = credential.enrollmentId;
  if (got.kind === 'unauthenticated') {
    return { ok: false, line: `AX_WORKER_CREDENTIAL_FILE=${JSON.stringify(credential.file)}: admin-api (${adminUrl}) does not accept the credential of enrollment ${eid}: unknown or revoked` };
  }
  if (got.kind === 'unusable') return { ok: false, line: `AX_ADMIN_URL=${JSON.stringify(adminUrl)}: ${got.problem}` };
  const { answer } = got;
  if (answer.enrollment.id !== eid) {
    return { ok: false, line: `AX_ADMIN_URL=${JSON.stringify(adminUrl)}: answered for enrollment ${answer.enrollment.id}, not ${eid} of the credential` };
  }
  const narrowed = narrowTeams(answer.enrollment.teams, input.requestedTeams);
  if (!narrowed.ok) {
    return answer.enrollment.teams.length === 0
      ? { ok: false, line: `enrollment ${eid} (${answer.enrollment.name}) has no teams: a worker of it could run nothing` }
      : { ok: false, line: `AX_WORKER_TEAMS=${JSON.stringify(input.requestedTeams.join(','))} is invalid: ${narrowed.problem}` };
  }
  const badTags = tagsProblem(answer.enrollment.tags, input.tags);
  if (badTags !== undefined) return { ok: false, line: `AX_WORKER_TAGS=${JSON.stringify(input.tags.join(','))} is invalid: ${badTags}` };
  let workerId: string;
  try {
    workerId = enrolledWorkerId(eid, input.localId);
  } catch (error) {
    return { ok: false, line: `enrollment ${eid}: ${toError(error).message}` };
  }
  if (!WORKER_ID_PATTERN.test(workerId)) return { ok: false, line: `AX_WORKER_ID=${JSON.stringify(input.localId)} is invalid: ${workerId} is not a valid worker id` };
  logger.info({ enrollmentId: eid, enrollment: answer.enrollment.name, workerId, teams: describeScope(narrowed.scope), keys: answer.keys.length }, 'enrolled');
  return {
    ok: true,
    enrolled: {
      answer,
      enrollmentId: eid,
      workerId,
      teams: narrowed.scope,
      amqpUrls: input.amqpUrls.map((url) => withLogin(url, answer.amqp.username, answer.amqp.password)),
      redisUrl: withLogin(input.redisUrl, answer.redis.username, answer.redis.password),
    },
  };
}
