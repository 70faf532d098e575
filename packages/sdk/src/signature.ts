/**
 * Signature v2, shared by ax workers, business endpoints and the report/claim endpoints
 * (ADMIN-API.md "HTTP executors"):
 *
 *   X-Ax-Team: <team>   X-Ax-Key-Version: <n>   X-Ax-Timestamp: <unix ms>
 *   X-Ax-Signature: v2=<hex HMAC-SHA256(key, "v2\n<timestamp>\n<METHOD>\n<path>\n<body>")>
 *
 * `key` is the team's executor key of version n (`GET /api/v1/teams/{team}/executor-key`),
 * never the master `AX_EXECUTOR_SECRET`. `<path>` is the request's path with its query string
 * exactly as sent, so a signature made for one execution's `/report` does not verify at
 * another's. During a key rotation's grace a worker also sends `X-Ax-Previous-Signature`, made
 * with version n−1, so a service that has not loaded the new key yet keeps verifying.
 *
 * The same scheme as `@ax/core`'s signature-v2.ts (this package depends on no ax internals);
 * both test against the same vector.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Default accepted distance between a request's timestamp and the receiver's clock: 5 min. */
export const DEFAULT_MAX_SKEW_MS = 300_000;

/** A team's executor keys as a service holds them: version → key (hex, as ax hands it out). */
export interface TeamKeys {
  readonly team: string;
  /** One or two versions: the current one, and the previous one while a rotation's grace lasts. */
  readonly keys: Readonly<Record<number, string>>;
}

/** What a signature covers. */
export interface SignedRequest {
  readonly timestamp: string;
  readonly method: string;
  /** The path with its query string exactly as sent, e.g. `/api/v1/executions/0190…/report`. */
  readonly path: string;
  readonly body: string | Buffer;
}

/** The `X-Ax-Signature` value of a request under `key`. */
export function signV2(key: string, request: SignedRequest): string {
  return `v2=${createHmac('sha256', key)
    .update(`v2\n${request.timestamp}\n${request.method.toUpperCase()}\n${request.path}\n`)
    .update(request.body)
    .digest('hex')}`;
}

/** The newest version of `keys` (the one a service signs with). */
export function currentVersion(keys: TeamKeys): { version: number; key: string } {
  const versions = Object.keys(keys.keys).map(Number).filter((v) => Number.isInteger(v) && v > 0);
  if (versions.length === 0) throw new Error('ax-scheduler-sdk: `keys` holds no key (version → key, from GET /api/v1/teams/{team}/executor-key)');
  const version = Math.max(...versions);
  return { version, key: keys.keys[version] as string };
}

/** Headers of a signed request from a business service to the admin API (report, claim). */
export function signedHeaders(keys: TeamKeys, request: Omit<SignedRequest, 'timestamp'>, nowMs: number = Date.now()): Record<string, string> {
  const { version, key } = currentVersion(keys);
  const timestamp = String(nowMs);
  return {
    'content-type': 'application/json',
    'x-ax-team': keys.team,
    'x-ax-key-version': String(version),
    'x-ax-timestamp': timestamp,
    'x-ax-signature': signV2(key, { ...request, timestamp }),
  };
}

/** Why a signed request was refused. */
export type SignatureProblem = 'MISSING_SIGNATURE' | 'SIGNATURE_V1' | 'BAD_TIMESTAMP' | 'STALE_TIMESTAMP' | 'WRONG_TEAM' | 'UNKNOWN_KEY_VERSION' | 'BAD_SIGNATURE';

/** The signature headers of a received request (absent = undefined). */
export interface ReceivedSignature {
  readonly team: string | undefined;
  readonly keyVersion: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
  /** `X-Ax-Previous-Signature` (made with version − 1 during a rotation). */
  readonly previousSignature?: string | undefined;
}

function matches(key: string, request: SignedRequest, signature: string): boolean {
  const expected = Buffer.from(signV2(key, request));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Checks a received request against the service's keys; null when it is valid. */
export function verifySignature(options: {
  readonly keys: TeamKeys;
  readonly received: ReceivedSignature;
  readonly method: string;
  readonly path: string;
  readonly body: Buffer | string;
  readonly nowMs?: number;
  readonly maxSkewMs?: number;
}): SignatureProblem | null {
  const { team, keyVersion, timestamp, signature, previousSignature } = options.received;
  if (timestamp === undefined || signature === undefined) return 'MISSING_SIGNATURE';
  if (signature.startsWith('sha256=')) return 'SIGNATURE_V1';
  if (team === undefined || keyVersion === undefined) return 'MISSING_SIGNATURE';
  if (!/^\d{1,16}$/.test(timestamp)) return 'BAD_TIMESTAMP';
  const skew = Math.abs((options.nowMs ?? Date.now()) - Number(timestamp));
  if (skew > (options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS)) return 'STALE_TIMESTAMP';
  if (team !== options.keys.team) return 'WRONG_TEAM';
  if (!/^[1-9]\d{0,8}$/.test(keyVersion)) return 'UNKNOWN_KEY_VERSION';
  const version = Number(keyVersion);
  const request = { timestamp, method: options.method, path: options.path, body: options.body };
  const current = options.keys.keys[version];
  if (current !== undefined) return matches(current, request, signature) ? null : 'BAD_SIGNATURE';
  // A rotation this service has not caught up with: the worker's signature with version − 1.
  const previous = options.keys.keys[version - 1];
  if (previous !== undefined && previousSignature !== undefined) return matches(previous, request, previousSignature) ? null : 'BAD_SIGNATURE';
  return 'UNKNOWN_KEY_VERSION';
}
