/**
 * The `AX_ADMIN_TOKEN` bootstrap token across real admin-api starts (issue #18 item 4): real
 * processes (`services/admin-api/dist/main.js`: run `pnpm build` first) on one test database.
 * A revoked bootstrap token stays revoked whatever replica restarts with it; a start with a new
 * value revokes the old one; replicas starting at once make one token.
 */
import { createHash } from 'node:crypto';
import type { RowDataPacket } from 'mysql2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertApiToken } from '@ax/store';
import {
  assertNoLeftoverProcesses,
  createTestAmqp,
  createTestDatabase,
  createTestRedis,
  startService,
  stopAllProcesses,
  uniqueNamespace,
  type ManagedProcess,
  type TestAmqp,
  type TestDatabase,
  type TestRedis,
} from '@ax/testing';

const namespace = uniqueNamespace('axadmboot');
const OTHER_ADMIN = 'other-admin-token-0123456789';
let db: TestDatabase;
let redis: TestRedis;
let amqp: TestAmqp;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis(namespace);
  amqp = await createTestAmqp(namespace);
  await insertApiToken(db.pool, { name: 'ops-admin', role: 'admin', tokenHash: createHash('sha256').update(OTHER_ADMIN).digest('hex') });
});
afterAll(async () => {
  await stopAllProcesses({ graceMs: 5_000 });
  assertNoLeftoverProcesses();
  await amqp?.cleanup();
  await redis?.cleanup();
  await db?.drop();
});

type AdminApi = ManagedProcess & { readonly baseUrl: string };

function adminApi(name: string, adminToken: string): Promise<AdminApi> {
  return startService('admin-api', {
    name,
    env: {
      AX_MYSQL_URL: db.url,
      AX_REDIS_URL: redis.url,
      AX_AMQP_URL: amqp.url,
      AX_NAMESPACE: namespace,
      AX_ADMIN_TOKEN: adminToken,
      AX_LOG_LEVEL: 'info',
      AX_SHUTDOWN_GRACE_S: '2',
    },
    readyTimeoutMs: 30_000,
  });
}

/** `GET /api/v1/whoami` of a token: its status, and the caller on a 200. */
async function whoami(api: AdminApi, token: string): Promise<{ status: number; body: { name: string; role: string; tokenId: string } | null }> {
  const response = await fetch(`${api.baseUrl}/api/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { name: string; role: string; tokenId: string };
  return { status: response.status, body: response.status === 200 ? body : null };
}
async function revoke(api: AdminApi, tokenId: string, adminToken: string): Promise<number> {
  const response = await fetch(`${api.baseUrl}/api/v1/tokens/${tokenId}`, { method: 'DELETE', headers: { authorization: `Bearer ${adminToken}` } });
  await response.arrayBuffer();
  return response.status;
}

type TokenRow = RowDataPacket & { id: string; token_hash: string; revoked_at: Date | null };
async function bootstrapRows(): Promise<TokenRow[]> {
  const [rows] = await db.pool.query<TokenRow[]>("SELECT id, token_hash, revoked_at FROM api_token WHERE name = 'bootstrap-admin' ORDER BY id");
  return rows;
}
const liveBootstrapCount = async () => (await bootstrapRows()).filter((r) => r.revoked_at === null).length;

/** The warnings the process logged about AX_ADMIN_TOKEN (pino JSON on stdout, `"level":"warn"`). */
function adminTokenWarnings(api: AdminApi): string[] {
  return api
    .lines()
    .map((l) => l.text)
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as { level?: string; msg?: string })
    .filter((entry) => entry.level === 'warn' && (entry.msg ?? '').includes('AX_ADMIN_TOKEN'))
    .map((entry) => entry.msg ?? '');
}

describe('admin-api start-up and the AX_ADMIN_TOKEN bootstrap token', () => {
  it('a revoked bootstrap token stays revoked across a restart: one warning, the API runs, other tokens work', { timeout: 90_000 }, async () => {
    const leaked = 'leaked-bootstrap-token-0123456789';
    const first = await adminApi('admin-api-1', leaked);
    const me = await whoami(first, leaked);
    expect(me).toMatchObject({ status: 200, body: { name: 'bootstrap-admin', role: 'admin' } });
    const tokenId = me.body?.tokenId ?? '';
    // revoked through the API (by the token itself, which is admin)
    expect(await revoke(first, tokenId, leaked)).toBe(204);
    expect((await whoami(first, leaked)).status).toBe(401);
    await first.stop();

    // the next (rolling) restart of every replica still has the leaked value
    const again = await adminApi('admin-api-1-restarted', leaked);
    const other = await adminApi('admin-api-2-restarted', leaked);
    for (const api of [again, other]) {
      expect((await whoami(api, leaked)).status).toBe(401);
      expect((await whoami(api, OTHER_ADMIN)).body).toMatchObject({ name: 'ops-admin', role: 'admin' });
      const lines = adminTokenWarnings(api);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/revoked/);
      expect(api.output()).not.toContain(leaked);
    }
    await Promise.all([again.stop(), other.stop()]);
    const stored = (await bootstrapRows()).filter((r) => String(r.id) === tokenId);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.revoked_at).toBeInstanceOf(Date);
  });

  it('rotating AX_ADMIN_TOKEN during a rolling restart revokes the old one; an old-valued replica restarting does not revive it', { timeout: 90_000 }, async () => {
    const oldValue = 'rotation-old-value-0123456789';
    const newValue = 'rotation-new-value-0123456789';
    const b = await adminApi('admin-api-b-old', oldValue);
    expect((await whoami(b, oldValue)).status).toBe(200);
    // replica A comes up with the new value while B still runs with the old one
    const a = await adminApi('admin-api-a-new', newValue);
    expect((await whoami(a, newValue)).body).toMatchObject({ name: 'bootstrap-admin', role: 'admin' });
    expect((await whoami(a, oldValue)).status).toBe(401);
    expect((await whoami(b, oldValue)).status).toBe(401);
    // B restarts once more before its configuration was updated: the old value stays revoked
    await b.stop();
    const bStillOld = await adminApi('admin-api-b-still-old', oldValue);
    expect((await whoami(bStillOld, oldValue)).status).toBe(401);
    expect((await whoami(bStillOld, newValue)).status).toBe(200);
    expect(adminTokenWarnings(bStillOld)).toHaveLength(1);
    await bStillOld.stop();
    // and then with the new value
    const bNew = await adminApi('admin-api-b-new', newValue);
    expect((await whoami(bNew, newValue)).status).toBe(200);
    expect((await whoami(bNew, oldValue)).status).toBe(401);
    expect(await liveBootstrapCount()).toBe(1);
    await Promise.all([a.stop(), bNew.stop()]);
  });

  it('two replicas bootstrapping at once with a new value make one token, and both start', { timeout: 60_000 }, async () => {
    const value = 'two-replicas-value-0123456789';
    const [one, two] = await Promise.all([adminApi('admin-api-twin-1', value), adminApi('admin-api-twin-2', value)]);
    expect((await whoami(one, value)).status).toBe(200);
    expect((await whoami(two, value)).status).toBe(200);
    const hash = createHash('sha256').update(value).digest('hex');
    expect((await bootstrapRows()).filter((r) => r.token_hash === hash)).toHaveLength(1);
    expect(await liveBootstrapCount()).toBe(1);
    await Promise.all([one.stop(), two.stop()]);
  });
});
