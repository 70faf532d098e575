/**
 * The HMAC scheme shared by ax workers, business endpoints and the report/claim endpoints
 * (ADMIN-API.md "HTTP executors"): `X-Ax-Timestamp: <unix ms>` and
 * `X-Ax-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Default accepted distance between a request's timestamp and the receiver's clock: 5 min. */
export const DEFAULT_MAX_SKEW_MS = 300_000;

/** The `X-Ax-Signature` value of a body. */
export function signBody(secret: string, timestampMs: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampMs}.`).update(body).digest('hex')}`;
}

/** Headers to send with a signed request. */
export function signedHeaders(secret: string, body: string, nowMs: number = Date.now()): Record<string, string> {
  const timestamp = String(nowMs);
  return { 'content-type': 'application/json', 'x-ax-timestamp': timestamp, 'x-ax-signature': signBody(secret, timestamp, body) };
}

/** Why a signed request was refused. */
export type SignatureProblem = 'MISSING_SIGNATURE' | 'BAD_TIMESTAMP' | 'STALE_TIMESTAMP' | 'BAD_SIGNATURE';

/** Checks a request's signature; null when it is valid. */
export function verifySignature(options: {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer | string;
  nowMs?: number;
  maxSkewMs?: number;
}): SignatureProblem | null {
  const { timestamp, signature } = options;
  if (timestamp === undefined || signature === undefined) return 'MISSING_SIGNATURE';
  if (!/^\d{1,16}$/.test(timestamp)) return 'BAD_TIMESTAMP';
  const skew = Math.abs((options.nowMs ?? Date.now()) - Number(timestamp));
  if (skew > (options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS)) return 'STALE_TIMESTAMP';
  const expected = Buffer.from(signBody(options.secret, timestamp, options.body));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'BAD_SIGNATURE';
  return null;
}
