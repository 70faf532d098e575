/**
 * api_token: the bootstrap token of `AX_ADMIN_TOKEN` (issue #18 item 4). A start never
 * un-revokes it; a start with a new value revokes the previous one; replicas starting at once,
 * with the same value or with the old and the new value of a rotation, settle on one live
 * bootstrap token. Real MySQL; each replica is its own pool, as separate processes would be.
 */
import { createHash } from 'node:crypto';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { createPool, type StorePool } from '../pool.js';
import { listAuditEntries } from './audit.js';
import { findApiTokenByHash, insertApiToken, revokeApiToken, upsertApiToken } from './tokens.js';

const BOOTSTRAP = { name: 'bootstrap-admin', role: 'admin' };
const hash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
let counter = 0;
/** A fresh token value per use, so the tests share one database without seeing each other's values. */
const freshValue = (label: string): string => `${label}-${process.pid}-${++counter}-0123456789abcdef`;

let db: TestDatabase;
let replicaA: StorePool;
let replicaB: StorePool;

/** What a replica's start-up does with its `AX_ADMIN_TOKEN` value. */
const start = (replica: StorePool, value: string) => upsertApiToken(replica, { ...BOOTSTRAP, tokenHash: hash(value) });
const isLive = async (value: string): Promise<boolean> => (await findApiTokenByHash(db.pool, hash(value))) !== null;
type TokenRow = RowDataPacket & { id: string; name: string; role: string; token_hash: string; revoked_at: Date | null };
async function rowsOf(value: string): Promise<TokenRow[]> {
  const [rows] = await db.pool.query<TokenRow[]>('SELECT id, name, role, token_hash, revoked_at FROM api_token WHERE token_hash = ?', [hash(value)]);
  return rows;
}
/** The first (and, by the unique key, only) row of a value. */
async function rowOf(value: string): Promise<TokenRow> {
  const [row] = await rowsOf(value);
  if (row === undefined) throw new Error(`no api_token row for ${value}`);
  return row;
}
async function liveBootstrapHashes(): Promise<string[]> {
  const [rows] = await db.pool.query<TokenRow[]>("SELECT token_hash FROM api_token WHERE name = 'bootstrap-admin' AND revoked_at IS NULL");
  return rows.map((r) => r.token_hash);
}
/** Each test starts from "no live bootstrap token" (earlier tests' bootstrap tokens revoked). */
async function revokeAllBootstrapTokens(): Promise<void> {
  await db.pool.query("UPDATE api_token SET revoked_at = CURRENT_TIMESTAMP(3) WHERE name = 'bootstrap-admin' AND revoked_at IS NULL");
}

beforeAll(async () => {
  db = await createTestDatabase();
  replicaA = createPool(db.url, { connectionLimit: 3 });
  replicaB = createPool(db.url, { connectionLimit: 3 });
});
afterAll(async () => {
  await replicaA?.end();
  await replicaB?.end();
  await db?.drop();
});

describe('bootstrap token (AX_ADMIN_TOKEN) upsert at start-up', () => {
  it('a revoked bootstrap token stays revoked across a restart of any replica', async () => {
    await revokeAllBootstrapTokens();
    const value = freshValue('leaked');
    await start(replicaA, value);
    expect(await isLive(value)).toBe(true);
    const row = await rowOf(value);
    expect(await revokeApiToken(db.pool, String(row.id))).toBe(true);

    // the rolling restart that used to bring it back: both replicas start again with the same value
    const outcomes = [await start(replicaA, value), await start(replicaB, value)];
    expect(await isLive(value)).toBe(false);
    const rows = await rowsOf(value);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.revoked_at).toBeInstanceOf(Date);
    // the caller learns it, to warn
    expect(outcomes).toEqual([
      { state: 'revoked', id: String(row.id), revokedIds: [] },
      { state: 'revoked', id: String(row.id), revokedIds: [] },
    ]);
  });

  it('rotating AX_ADMIN_TOKEN revokes the old bootstrap token and makes the new one admin; other tokens stay', async () => {
    await revokeAllBootstrapTokens();
    const oldValue = freshValue('old');
    const newValue = freshValue('new');
    const otherAdminId = await insertApiToken(db.pool, { name: 'ops-admin', role: 'admin', tokenHash: hash(freshValue('ops')) });
    await start(replicaA, oldValue);
    const oldRow = await rowOf(oldValue);

    const outcome = await start(replicaA, newValue);
    const newRow = await rowOf(newValue);
    expect(await isLive(oldValue)).toBe(false);
    expect(outcome).toEqual({ state: 'active', id: String(newRow.id), revokedIds: [String(oldRow.id)] });
    expect(await findApiTokenByHash(db.pool, hash(newValue))).toMatchObject({ name: 'bootstrap-admin', role: 'admin' });
    expect(await liveBootstrapHashes()).toEqual([hash(newValue)]);
    const [other] = await db.pool.query<TokenRow[]>('SELECT revoked_at FROM api_token WHERE id = ?', [otherAdminId]);
    expect(other[0]?.revoked_at).toBeNull();
    // the revocation is in the audit log, like one made through DELETE /api/v1/tokens/{id}
    const audit = await listAuditEntries(db.pool, { actor: 'bootstrap-admin', limit: 50 });
    expect(audit).toContainEqual(
      expect.objectContaining({ action: 'token.revoke', target: `token:${String(oldRow.id)}`, before: { id: String(oldRow.id), name: 'bootstrap-admin', role: 'admin' } }),
    );
  });

  it('an old value started after a rotation stays revoked and leaves the new token alone (rolling restart)', async () => {
    await revokeAllBootstrapTokens();
    const oldValue = freshValue('old');
    const newValue = freshValue('new');
    await start(replicaA, oldValue);
    await start(replicaB, oldValue);
    // replica A comes back with the new value while B still runs with the old one
    await start(replicaA, newValue);
    expect(await isLive(oldValue)).toBe(false);
    // B restarts before its configuration was updated: the old value does not come back …
    expect(await start(replicaB, oldValue)).toMatchObject({ state: 'revoked', revokedIds: [] });
    // … nor does it revoke the new one; then B restarts with the new value
    expect(await isLive(newValue)).toBe(true);
    expect(await start(replicaB, newValue)).toMatchObject({ state: 'active', revokedIds: [] });
    expect(await liveBootstrapHashes()).toEqual([hash(newValue)]);
    expect(await rowsOf(newValue)).toHaveLength(1);
  });

  it('two replicas bootstrapping at once with the same new value make one token, and both succeed', async () => {
    for (let round = 0; round < 10; round++) {
      const oldValue = freshValue('old');
      const newValue = freshValue('new');
      await start(replicaA, oldValue);
      const outcomes = await Promise.all([start(replicaA, newValue), start(replicaB, newValue), start(replicaA, newValue), start(replicaB, newValue)]);
      expect(await rowsOf(newValue)).toHaveLength(1);
      expect(await liveBootstrapHashes()).toEqual([hash(newValue)]);
      expect(outcomes.map((o) => o.state)).toEqual(['active', 'active', 'active', 'active']);
      // the old token was revoked once, by one of them
      expect(outcomes.flatMap((o) => o.revokedIds)).toHaveLength(1);
    }
  });

  it('a replica on the old value starting during the rotation neither revives the old token nor revokes the new one', async () => {
    for (let round = 0; round < 10; round++) {
      const oldValue = freshValue('old');
      const newValue = freshValue('new');
      await start(replicaB, oldValue);
      // whichever order the two start-ups take, the new value ends as the one live bootstrap token
      await Promise.all([start(replicaA, newValue), start(replicaB, oldValue)]);
      expect(await liveBootstrapHashes()).toEqual([hash(newValue)]);
      await start(replicaB, oldValue);
      expect(await liveBootstrapHashes()).toEqual([hash(newValue)]);
    }
  });
});
