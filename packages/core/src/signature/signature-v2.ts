/**
 * Signature v2 of HTTP executions, reports and claims (ADMIN-API.md "HTTP executors"):
 * `X-Ax-Signature: v2=<hex HMAC-SHA256(key, "v2\n<timestamp>\n<METHOD>\n<path>\n<body>")>`,
 * with `X-Ax-Team`, `X-Ax-Key-Version` and `X-Ax-Timestamp` (unix ms). Binding the method and
 * the path (with its query, as sent) ties a report to its execution: a signature made for one
 * execution's `/report` does not verify at another's. v1 (`sha256=` over "<ts>.<body>") is
 * refused.
 *
 * `ax-scheduler-sdk` implements the same scheme for business code (it does not depend on this package);
 * `packages/sdk/src/signature.test.ts` checks both against the same vectors.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Accepted distance between a request's timestamp and the receiver's clock: 5 min. */
export const SIGNATURE_MAX_SKEW_MS = 300_000;

/** What a signature covers. */
export interface SignedRequest {
  /** Unix ms as sent in `X-Ax-Timestamp`. */
  readonly timestamp: string;
  /** `POST`, `GET`, … (upper-cased before signing). */
  readonly method: string;
  /** The request's path with its query string exactly as sent. */
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

/** Why a signed request was refused. */
export type SignatureRefusal =
  | { readonly code: 'MISSING_SIGNATURE'; readonly message: string }
  | { readonly code: 'SIGNATURE_V1'; readonly message: string }
  | { readonly code: 'BAD_TIMESTAMP'; readonly message: string }
  | { readonly code: 'STALE_TIMESTAMP'; readonly message: string }
  | { readonly code: 'BAD_SIGNATURE'; readonly message: string };

/** The signature headers of a request, as received (lower-case names). */
export interface SignatureHeaders {
  readonly team: string | undefined;
  readonly keyVersion: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
}

/** The parts of a v2 signature header set that are well formed. */
export interface ParsedSignatureHeaders {
  readonly team: string;
  readonly keyVersion: number;
  readonly timestamp: string;
  readonly signature: string;
}

/**
 * Checks the shape of the headers and the timestamp's distance from `nowMs`; the signature
 * itself is checked by `signatureMatches` once the receiver has the key of that team/version.
 */
export function parseSignatureHeaders(
  headers: SignatureHeaders,
  nowMs: number,
  maxSkewMs: number = SIGNATURE_MAX_SKEW_MS,
): { ok: true; value: ParsedSignatureHeaders } | { ok: false; refusal: SignatureRefusal } {
  const { team, keyVersion, timestamp, signature } = headers;
  const refuse = (refusal: SignatureRefusal): { ok: false; refusal: SignatureRefusal } => ({ ok: false, refusal });
  if (signature === undefined || timestamp === undefined) {
    return refuse({ code: 'MISSING_SIGNATURE', message: 'X-Ax-Timestamp and X-Ax-Signature are required' });
  }
  if (signature.startsWith('sha256=')) {
    return refuse({ code: 'SIGNATURE_V1', message: 'signature v1 (sha256=…) is no longer accepted: sign v2 with the team key (X-Ax-Team, X-Ax-Key-Version)' });
  }
  if (team === undefined || keyVersion === undefined) {
    return refuse({ code: 'MISSING_SIGNATURE', message: 'X-Ax-Team and X-Ax-Key-Version are required' });
  }
  if (!/^v2=[0-9a-f]{64}$/.test(signature)) return refuse({ code: 'BAD_SIGNATURE', message: 'X-Ax-Signature must be v2=<64 hex digits>' });
  if (!/^[1-9]\d{0,8}$/.test(keyVersion)) return refuse({ code: 'BAD_SIGNATURE', message: 'X-Ax-Key-Version must be a positive integer' });
  if (!/^\d{1,16}$/.test(timestamp)) return refuse({ code: 'BAD_TIMESTAMP', message: 'X-Ax-Timestamp must be unix milliseconds' });
  if (Math.abs(nowMs - Number(timestamp)) > maxSkewMs) {
    return refuse({ code: 'STALE_TIMESTAMP', message: 'X-Ax-Timestamp is more than 5 minutes from this clock' });
  }
  return { ok: true, value: { team, keyVersion: Number(keyVersion), timestamp, signature } };
}

/** Whether `signature` is the v2 signature of `request` under `key` (constant time). */
export function signatureMatches(key: string, request: SignedRequest, signature: string): boolean {
  const expected = Buffer.from(signV2(key, request));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
