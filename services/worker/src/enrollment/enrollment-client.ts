/**
 * The worker's one call to admin-api: `GET <AX_ADMIN_URL>/api/v1/workers/self` with its
 * enrollment's credential as Bearer token (ENROLLMENT-CONTRACT point 1). What came back is
 * classified for the caller, never thrown: the answer; `unauthenticated` (401: the credential is
 * unknown, malformed or revoked — admin-api gives one uniform answer); `unusable` (an answer that
 * is not a worker bootstrap: `AX_ADMIN_URL` points elsewhere, or an admin-api without the
 * endpoint); `unreachable` (no answer, 5xx, 429: worth asking again later).
 */
import { toError } from '@ax/kit';
import { parseBootstrapAnswer, type BootstrapAnswer } from './bootstrap-answer.js';

/** Path of the bootstrap endpoint under `AX_ADMIN_URL`. */
export const WORKER_SELF_PATH = '/api/v1/workers/self';

/** What asking admin-api gave. */
export type EnrollmentFetch =
  | { readonly kind: 'ok'; readonly answer: BootstrapAnswer }
  | { readonly kind: 'unauthenticated' }
  | { readonly kind: 'unusable'; readonly problem: string }
  | { readonly kind: 'unreachable'; readonly problem: string };

/** Options of `fetchEnrollment`. */
export interface EnrollmentClientOptions {
  /** `AX_ADMIN_URL`: admin-api's base URL. */
  readonly adminUrl: string;
  /** The credential read from `AX_WORKER_CREDENTIAL_FILE`. */
  readonly credential: string;
  /** Per request; default 10000 ms. */
  readonly timeoutMs?: number;
}

/** The URL asked: `AX_ADMIN_URL` (any path of it kept as a prefix) + the endpoint. */
export function workerSelfUrl(adminUrl: string): string {
  const base = new URL(adminUrl);
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}${WORKER_SELF_PATH}`;
}

/** Asks admin-api for the worker's enrollment once. Never rejects. */
export async function fetchEnrollment(options: EnrollmentClientOptions): Promise<EnrollmentFetch> {
  const url = workerSelfUrl(options.adminUrl);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: `Bearer ${options.credential}`, accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  } catch (error) {
    const cause = (toError(error).cause as { code?: unknown } | undefined)?.code;
    return { kind: 'unreachable', problem: `GET ${url} failed: ${typeof cause === 'string' ? `${cause} ` : ''}${toError(error).message}` };
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    return { kind: 'unreachable', problem: `GET ${url}: the answer could not be read: ${toError(error).message}` };
  }
  if (response.status === 401) return { kind: 'unauthenticated' };
  if (response.status >= 500 || response.status === 429 || response.status === 408) {
    return { kind: 'unreachable', problem: `GET ${url} answered ${response.status}` };
  }
  if (response.status !== 200) return { kind: 'unusable', problem: `GET ${url} answered ${response.status}, not a worker's enrollment` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'unusable', problem: `GET ${url} answered 200 with a body that is not JSON` };
  }
  const parsed = parseBootstrapAnswer(json);
  if (!parsed.ok) return { kind: 'unusable', problem: `GET ${url} answered 200 but not a worker's enrollment (${parsed.problem})` };
  return { kind: 'ok', answer: parsed.answer };
}
