/**
 * The Redis ACL users of worker enrollments (DESIGN R24): one per enrollment, named like its
 * RabbitMQ user (`<ns>.<enrollment id>`), with the password admin-api derives. It may write only
 * its own workers' registry entries (`<ns>:worker:<enrollment id>.*`) and its enrollment's set of
 * worker ids (`<ns>:workers:<enrollment id>`), and read only its own workers' drain marks: it
 * cannot forge, refresh or remove another worker's entry, nor read or write anything else.
 * Brokers, schedulers and admin-api keep their own users (admin-api's needs `+acl` to run this).
 *
 * Redis keeps ACL users per server: with replicas or Sentinel, run the same SETUSER on each
 * (admin-api does it on the primary it is connected to; docs/deploy.md says how to replicate).
 */
import { createHash } from 'node:crypto';
import { redisUserOf } from '@ax/core';
import type { Redis, RedisKeys } from '@ax/kit';
import { workerSetOf } from './registry.js';

/** Commands an enrolled worker uses: connect (ioredis' ready check and name), its registry entry, its clock check. */
const WORKER_COMMANDS = ['+ping', '+info', '+client|setname', '+select', '+time', '+get', '+set', '+del', '+exists', '+sadd', '+srem', '+multi', '+exec', '+discard'];

/** The ACL rules of an enrollment's user (after `reset`: off, no keys, no channels, no commands). */
export function enrollmentAclRules(keys: RedisKeys, enrollmentId: string, password: string): string[] {
  const own = `${keys.worker(enrollmentId)}.*`;
  return [
    'reset',
    'on',
    `#${createHash('sha256').update(password).digest('hex')}`,
    `%RW~${own}`,
    `%RW~${keys.enrollmentWorkers(enrollmentId)}`,
    `%R~${keys.drain(enrollmentId)}.*`,
    ...WORKER_COMMANDS,
  ];
}

/**
 * Creates (or resets) the ACL user of an enrollment and lists the enrollment among the live ones
 * (brokers read the worker ids of live enrollments only). Idempotent.
 */
export async function putEnrollmentRedisUser(redis: Redis, keys: RedisKeys, enrollmentId: string, password: string): Promise<void> {
  await redis.call('ACL', 'SETUSER', redisUserOf(keys.namespace, enrollmentId), ...enrollmentAclRules(keys, enrollmentId, password));
  await redis.sadd(keys.enrollments, enrollmentId);
}

/**
 * Deletes an enrollment's ACL user (Redis disconnects its clients at once), and removes its
 * workers' registry entries and set, so brokers find those workers gone and recover their
 * executions as from a lost worker. Returns the worker ids removed. Idempotent.
 */
export async function deleteEnrollmentRedisUser(redis: Redis, keys: RedisKeys, enrollmentId: string): Promise<string[]> {
  await redis.call('ACL', 'DELUSER', redisUserOf(keys.namespace, enrollmentId));
  const set = keys.enrollmentWorkers(enrollmentId);
  const ids = (await redis.smembers(set)).filter((id) => workerSetOf(keys, id) === set);
  const multi = redis.multi().srem(keys.enrollments, enrollmentId).del(set);
  for (const id of ids) multi.del(keys.worker(id));
  await multi.exec();
  return ids;
}
