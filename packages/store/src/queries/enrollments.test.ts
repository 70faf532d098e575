/**
 * Worker enrollments as stored (migration 0014, ADMIN-API.md "Workers"): names unique among live
 * enrollments only, credentials kept as hashes, revocation final. Real MySQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import {
  EnrollmentNameTakenError,
  dropTeamFromEnrollments,
  getEnrollment,
  getLiveEnrollmentByCredentialHash,
  insertEnrollment,
  listEnrollments,
  liveEnrollmentTeams,
  revokeEnrollment,
} from './enrollments.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const hash = (c: string) => c.repeat(64).slice(0, 64);

describe('worker_enrollment', () => {
  it('stores, finds by credential hash, lists, and revokes once', async () => {
    const e = await insertEnrollment(db.pool, { id: 'enr-aaaaaaaaaaa1', name: 'pool-a', teams: ['alpha'], tags: ['gpu'], credentialHash: hash('a'), createdBy: 'root' });
    expect(e).toMatchObject({ id: 'enr-aaaaaaaaaaa1', name: 'pool-a', teams: ['alpha'], tags: ['gpu'], createdBy: 'root', revokedAt: null });
    expect((await getLiveEnrollmentByCredentialHash(db.pool, hash('a')))?.id).toBe('enr-aaaaaaaaaaa1');
    expect(await getLiveEnrollmentByCredentialHash(db.pool, hash('b'))).toBeNull();
    expect([...(await liveEnrollmentTeams(db.pool)).entries()]).toEqual([['enr-aaaaaaaaaaa1', ['alpha']]]);

    expect(await revokeEnrollment(db.pool, 'enr-aaaaaaaaaaa1')).toBe(true);
    expect(await revokeEnrollment(db.pool, 'enr-aaaaaaaaaaa1')).toBe(false);
    expect(await revokeEnrollment(db.pool, 'enr-nothere00000')).toBe(false);
    expect(await getLiveEnrollmentByCredentialHash(db.pool, hash('a'))).toBeNull();
    expect((await getEnrollment(db.pool, 'enr-aaaaaaaaaaa1'))?.revokedAt).toBeInstanceOf(Date);
    expect((await liveEnrollmentTeams(db.pool)).size).toBe(0);
    expect(await listEnrollments(db.pool)).toEqual([]);
    expect((await listEnrollments(db.pool, { includeRevoked: true })).map((r) => r.id)).toEqual(['enr-aaaaaaaaaaa1']);
  });

  it('refuses a second live enrollment of one name, and allows the name again once revoked', async () => {
    await insertEnrollment(db.pool, { id: 'enr-bbbbbbbbbbb1', name: 'pool-b', teams: ['*'], tags: [], credentialHash: hash('c'), createdBy: null });
    await expect(
      insertEnrollment(db.pool, { id: 'enr-bbbbbbbbbbb2', name: 'pool-b', teams: ['beta'], tags: [], credentialHash: hash('d'), createdBy: null }),
    ).rejects.toBeInstanceOf(EnrollmentNameTakenError);
    expect(await getEnrollment(db.pool, 'enr-bbbbbbbbbbb2')).toBeNull();
    await revokeEnrollment(db.pool, 'enr-bbbbbbbbbbb1');
    const again = await insertEnrollment(db.pool, { id: 'enr-bbbbbbbbbbb3', name: 'pool-b', teams: ['beta'], tags: [], credentialHash: hash('e'), createdBy: null });
    expect(again.teams).toEqual(['beta']);
  });

  it('takes a deleted team off the live enrollments naming it, leaving "*" and revoked ones alone', async () => {
    await insertEnrollment(db.pool, { id: 'enr-ccccccccccc1', name: 'pool-c1', teams: ['gamma', 'delta'], tags: [], credentialHash: hash('f'), createdBy: null });
    await insertEnrollment(db.pool, { id: 'enr-ccccccccccc2', name: 'pool-c2', teams: ['gamma'], tags: [], credentialHash: hash('g'), createdBy: null });
    await insertEnrollment(db.pool, { id: 'enr-ccccccccccc3', name: 'pool-c3', teams: ['*'], tags: [], credentialHash: hash('h'), createdBy: null });
    await insertEnrollment(db.pool, { id: 'enr-ccccccccccc4', name: 'pool-c4', teams: ['gamma'], tags: [], credentialHash: hash('i'), createdBy: null });
    await revokeEnrollment(db.pool, 'enr-ccccccccccc4');
    expect((await dropTeamFromEnrollments(db.pool, 'gamma')).sort()).toEqual(['enr-ccccccccccc1', 'enr-ccccccccccc2']);
    expect((await getEnrollment(db.pool, 'enr-ccccccccccc1'))?.teams).toEqual(['delta']);
    expect((await getEnrollment(db.pool, 'enr-ccccccccccc2'))?.teams).toEqual([]);
    expect((await getEnrollment(db.pool, 'enr-ccccccccccc3'))?.teams).toEqual(['*']);
    expect((await getEnrollment(db.pool, 'enr-ccccccccccc4'))?.teams).toEqual(['gamma']);
    expect(await dropTeamFromEnrollments(db.pool, 'gamma')).toEqual([]);
  });
});
