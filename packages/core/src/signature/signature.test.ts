import { describe, expect, it } from 'vitest';
import { acceptedKeyVersions, deriveExecutorKey, ExecutorKeyring } from './executor-key.js';
import { parseSignatureHeaders, signatureMatches, signV2 } from './signature-v2.js';

/** The vector packages/sdk/src/signature.test.ts checks too: both implementations must agree. */
const VECTOR = {
  master: 'master-secret-of-at-least-32-characters!',
  team: 'payments',
  keyVersion: 2,
  request: { timestamp: '1764547200000', method: 'POST', path: '/api/v1/executions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/report', body: '{"success":true}' },
};

describe('executor keys (ADMIN-API.md "Teams")', () => {
  it('derives the key as hex HMAC-SHA256(master, "ax-executor-key\\n<team>\\n<v>")', () => {
    const key = deriveExecutorKey(VECTOR.master, VECTOR.team, VECTOR.keyVersion);
    expect(key).toBe('a392c1d53cd766d4f6dae69cdffbc292c31245fdbff749f2d3308a928daa793d');
    expect(key).not.toBe(deriveExecutorKey(VECTOR.master, 'orders', VECTOR.keyVersion));
    expect(key).not.toBe(deriveExecutorKey(VECTOR.master, VECTOR.team, 3));
    expect(new ExecutorKeyring(VECTOR.master).keyOf(VECTOR.team, 2)).toBe(key);
  });

  it('accepts the previous version only while the grace lasts', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    expect(acceptedKeyVersions({ keyVersion: 3, previousKeyValidUntil: new Date(now + 1) }, now)).toEqual([3, 2]);
    expect(acceptedKeyVersions({ keyVersion: 3, previousKeyValidUntil: new Date(now) }, now)).toEqual([3]);
    expect(acceptedKeyVersions({ keyVersion: 1, previousKeyValidUntil: null }, now)).toEqual([1]);
  });
});

describe('signature v2', () => {
  const key = deriveExecutorKey(VECTOR.master, VECTOR.team, VECTOR.keyVersion);
  const signature = signV2(key, VECTOR.request);

  it('binds the method, the path and the body', () => {
    // the same vector as packages/sdk/src/sdk.test.ts
    expect(signature).toBe('v2=ae7cb030034ea3382c3a1676cc7bc396970b5044d45c7794953928c743414c9a');
    expect(signatureMatches(key, VECTOR.request, signature)).toBe(true);
    expect(signatureMatches(key, { ...VECTOR.request, path: VECTOR.request.path.replace('5b/', '5c/') }, signature)).toBe(false);
    expect(signatureMatches(key, { ...VECTOR.request, method: 'PUT' }, signature)).toBe(false);
    expect(signatureMatches(key, { ...VECTOR.request, body: '{"success":false}' }, signature)).toBe(false);
    expect(signatureMatches(deriveExecutorKey(VECTOR.master, 'orders', 2), VECTOR.request, signature)).toBe(false);
  });

  it('refuses v1, missing team headers and stale timestamps', () => {
    const now = Number(VECTOR.request.timestamp);
    const base = { team: 'payments', keyVersion: '2', timestamp: VECTOR.request.timestamp, signature };
    expect(parseSignatureHeaders(base, now)).toEqual({ ok: true, value: { team: 'payments', keyVersion: 2, timestamp: base.timestamp, signature } });
    const code = (h: Partial<typeof base>, at = now): string | undefined => {
      const r = parseSignatureHeaders({ ...base, ...h }, at);
      return r.ok ? undefined : r.refusal.code;
    };
    expect(code({ signature: `sha256=${'0'.repeat(64)}` })).toBe('SIGNATURE_V1');
    expect(code({ team: undefined })).toBe('MISSING_SIGNATURE');
    expect(code({ keyVersion: '0' })).toBe('BAD_SIGNATURE');
    expect(code({ timestamp: 'soon' })).toBe('BAD_TIMESTAMP');
    expect(code({}, now + 300_001)).toBe('STALE_TIMESTAMP');
  });
});
