/**
 * R24 on the routing side (ENROLLMENT-CONTRACT point 5) and revocation (issue #44): the teams an
 * enrolled worker serves are its enrollment's, as stored, never what its registry entry claims;
 * a worker of a revoked enrollment gets nothing; and revoking an enrollment (deleting its
 * RabbitMQ and Redis users, which removes its workers' registry entries) recovers their running
 * work through the lost-worker path (R14). The enrolled peers use only their enrollment's logins.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTeam, revokeEnrollment } from '@ax/store';
import { waitFor } from '@ax/testing';
import { EnrolledPeer, TEST_TIMINGS, TestEnrollment, startBrokerHarness, type BrokerHarness } from './test-support.js';

let h: BrokerHarness;
const enrollments: TestEnrollment[] = [];
const peers: EnrolledPeer[] = [];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function enroll(id: string, teams: string[]): Promise<TestEnrollment> {
  const e = await TestEnrollment.create(h, id, teams);
  enrollments.push(e);
  return e;
}

async function peer(e: TestEnrollment, localId: string, tags: string[], teams?: string[]): Promise<EnrolledPeer> {
  const p = await new EnrolledPeer(h, e, localId, tags, teams).start();
  peers.push(p);
  return p.heartbeat();
}

beforeAll(async () => {
  h = await startBrokerHarness();
  await insertTeam(h.db.pool, { name: 'alpha', description: '', maxRunning: null });
  await insertTeam(h.db.pool, { name: 'beta', description: '', maxRunning: null });
}, 60_000);

afterAll(async () => {
  for (const p of peers) await p.stop();
  for (const e of enrollments) await e.remove().catch(() => undefined);
  await h?.close();
});

describe('R24 an enrolled worker serves the teams of its enrollment, never the teams it claims', () => {
  it("a worker enrolled for beta whose registry entry advertises alpha never receives alpha's work; its sibling advertising nothing gets beta's only", async () => {
    const beta = await enroll('enr-betabetabeta', ['beta']);
    const claimsAlpha = await peer(beta, 'claims-alpha', ['teams'], ['alpha']);
    const alphaTask = await h.task('alpha_job', { team: 'alpha', tags: ['teams'], block: 'parallel' });
    const betaTask = await h.task('beta_job', { team: 'beta', tags: ['teams'], block: 'parallel' });
    const alphaId = await h.instance(alphaTask);
    const betaId = await h.instance(betaTask);
    // Several claim rounds (poll 100 ms): nobody may take either (alpha is not beta's; the
    // worker's own narrowing to alpha leaves it no team of its enrollment).
    await waitFor(async () => (await h.events(alphaId)).includes('NO_WORKER'), { description: "alpha's instance finds no worker" });
    await sleep(1_000);
    expect(claimsAlpha.dispatches).toHaveLength(0);
    expect((await h.row(alphaId)).state).toBe('PENDING');
    expect((await h.row(betaId)).state).toBe('PENDING');

    const sibling = await peer(beta, 'serves-beta', ['teams']);
    const [item] = await sibling.waitDispatches(1);
    expect(item?.instanceId).toBe(betaId);
    await sleep(1_000);
    expect(sibling.dispatches.map((d) => d.instanceId)).toEqual([betaId]);
    expect(claimsAlpha.dispatches).toHaveLength(0);
    expect((await h.row(alphaId)).state).toBe('PENDING');
    await sibling.ack([item!]);
    await sibling.result([item!], 'SUCCESS');
    await h.waitState(betaId, 'SUCCESS');
    for (const p of [claimsAlpha, sibling]) await p.stop();
    // alpha's instance is someone else's: an unenrolled worker takes it
    const plain = await h.peer('w-alpha', ['teams']);
    await plain.waitDispatches(1);
    expect(plain.dispatches[0]?.instanceId).toBe(alphaId);
    await plain.stop();
  });

  it('a worker of a revoked enrollment receives nothing, whatever its registry entry says', async () => {
    const revoked = await enroll('enr-revokedrevok', ['*']);
    await revokeEnrollment(h.db.pool, revoked.id);
    // Its Redis and RabbitMQ users still exist (revocation not finished): it can still register.
    const left = await peer(revoked, 'left-behind', ['revoked']);
    const task = await h.task('after_revoke', { tags: ['revoked'], block: 'parallel' });
    const id = await h.instance(task);
    await waitFor(async () => (await h.events(id)).includes('NO_WORKER'), { description: 'the instance finds no worker' });
    await sleep(1_000);
    expect(left.dispatches).toHaveLength(0);
    expect((await h.row(id)).state).toBe('PENDING');
    await left.stop();
  });
});

describe('R24/R14 revoking an enrollment recovers its running work', () => {
  it("deleting a revoked enrollment's users ends its workers at once; their RUNNING work is LOST_WORKER within the lease and runs again elsewhere", async () => {
    const doomed = await enroll('enr-doomeddoomed', ['*']);
    const victim = await peer(doomed, 'host-1', ['recover']);
    const task = await h.task('recovered_job', { tags: ['recover'], block: 'parallel', retry: { max: 1, backoffSeconds: 0, jitterSeconds: 0 } });
    const id = await h.instance(task);
    const [item] = await victim.waitDispatches(1);
    await victim.ack([item!]);
    await h.waitState(id, 'RUNNING');
    // The lease holds while its registry entry lists the execution (past lease + grace).
    await sleep(TEST_TIMINGS.leaseTtlMs! + TEST_TIMINGS.lostWorkerGraceMs! + 500);
    expect((await h.row(id)).state).toBe('RUNNING');
    const backup = (await h.peer('w-backup', ['recover'])).heartbeat();

    await revokeEnrollment(h.db.pool, doomed.id);
    const revokedAt = performance.now();
    await doomed.remove();
    await waitFor(async () => (await h.events(id)).includes('LOST_WORKER'), { description: 'LOST_WORKER', timeoutMs: 15_000 });
    const lostMs = performance.now() - revokedAt;
    // within the lost-worker time: one lease and its grace, plus a timers pass and the registry cache
    expect(lostMs).toBeLessThan(TEST_TIMINGS.leaseTtlMs! + TEST_TIMINGS.lostWorkerGraceMs! + 2_000);
    expect((await h.row(id)).lost_count).toBe(1);
    const [again] = await backup.waitDispatches(1);
    expect(again?.instanceId).toBe(id);
    expect(again?.attempt).toBe(2);
    await backup.ack([again!]);
    await backup.result([again!], 'SUCCESS');
    await h.waitState(id, 'SUCCESS');
    // The victim's connections were closed with its user: nothing more reached it.
    expect(victim.dispatches).toHaveLength(1);
  });
});
