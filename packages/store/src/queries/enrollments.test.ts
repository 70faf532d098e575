/**
 * Worker enrollments as stored (migration 0014, ADMIN-API.md "Workers"): names unique among live
 * enrollments only, credentials kept as hashes, revocation final. Real MySQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import {
  EnrollmentNameTakenError,
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
});
