/**
 * Authentication of a worker by its enrollment credential (ADMIN-API.md "Workers", the
 * enrollment contract's decision 1): `Authorization: Bearer axw_<enrollment id>_<secret>`.
 *
 * Only the credential's SHA-256 is stored; a live enrollment whose hash matches is the worker's
 * identity. A missing, malformed, unknown or revoked credential gets one answer, 401
 * `UNAUTHENTICATED` with the same message and details, so nothing tells an enrollment that
 * exists from one that never did or was revoked. Every such failure with a header is counted by
 * the same per-address limiter as unknown API tokens (auth.ts), and past its burst answered 429
 * with `Retry-After`; a valid credential is never backed off. API tokens are not credentials
 * here, and credentials are not API tokens: each kind is looked up only where it belongs.
 */
import type { Request } from 'express';
import { credentialHash, enrollmentOfCredential } from '@ax/core';
import { getLiveEnrollmentByCredentialHash, type EnrollmentRecord, type StorePool } from '@ax/store';
import type { AuthFailureLimiter } from './auth.js';
import { ApiError } from './errors.js';

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;

/** The one answer to every credential that does not authenticate. */
function unauthenticated(): ApiError {
  return new ApiError(401, 'UNAUTHENTICATED', 'a valid worker enrollment credential is required', {}, { 'www-authenticate': 'Bearer' });
}

/**
 * The live enrollment whose credential the request carries.
 * @throws ApiError 401 (missing, malformed, unknown or revoked: one answer), 429 (a failure from
 *   an address that has failed too often; `Retry-After`).
 */
export async function authenticateWorker(pool: StorePool, limiter: AuthFailureLimiter, req: Request): Promise<EnrollmentRecord> {
  const header = req.headers.authorization;
  if (header === undefined) throw unauthenticated(); // nothing tried: not counted, like a missing token
  const credential = BEARER.exec(header)?.[1];
  const claimedId = credential === undefined ? null : enrollmentOfCredential(credential);
  let enrollment: EnrollmentRecord | null = null;
  if (credential !== undefined && claimedId !== null) {
    // Looked up by its hash (what is stored); the id the credential names must be that row's
    // too: a credential is bound to its enrollment, and that id is what logs may show.
    const row = await getLiveEnrollmentByCredentialHash(pool, credentialHash(credential));
    if (row !== null && row.id === claimedId) enrollment = row;
  }
  if (enrollment === null) {
    const waitMs = limiter.fail(limiter.clientAddress(req));
    if (waitMs > 0) {
      throw new ApiError(429, 'RATE_LIMITED', 'the worker credential does not authenticate, and this address has failed too often; wait before trying again', {}, {
        'retry-after': String(Math.max(1, Math.ceil(waitMs / 1000))),
        'www-authenticate': 'Bearer',
      });
    }
    throw unauthenticated();
  }
  return enrollment;
}
