/**
 * Verification of signed calls from business services (`/report`, `/claim`; ADMIN-API.md "HTTP
 * executors", DESIGN §11): signature v2 over method, path (as sent, with its query) and body,
 * with the executor key of the team named by `X-Ax-Team` at `X-Ax-Key-Version` — the current
 * version, or the previous one while a rotation's grace lasts. v1 (`sha256=`) is refused. The
 * caller is then known as that team; the route checks that the execution is that team's.
 */
import type { Request } from 'express';
import { TEAM_NAME_PATTERN, acceptedKeyVersions, deriveExecutorKey, parseSignatureHeaders, signatureMatches } from '@ax/core';
import { getTeam } from '@ax/store';
import type { AppDeps } from './deps.js';
import { ApiError } from './errors.js';

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** Verifies a signed request; returns the team whose key signed it. @throws ApiError 401 / 503 */
export async function verifySignedRequest(deps: AppDeps, req: Request, raw: Buffer): Promise<string> {
  if (deps.executorSecret === undefined) throw new ApiError(503, 'UNAVAILABLE', 'AX_EXECUTOR_SECRET is not configured');
  const nowMs = deps.now();
  const parsed = parseSignatureHeaders(
    { team: header(req, 'x-ax-team'), keyVersion: header(req, 'x-ax-key-version'), timestamp: header(req, 'x-ax-timestamp'), signature: header(req, 'x-ax-signature') },
    nowMs,
    deps.hmacWindowMs,
  );
  if (!parsed.ok) throw new ApiError(401, 'BAD_SIGNATURE', parsed.refusal.message, { reason: parsed.refusal.code });
  const { team: teamName, keyVersion, timestamp, signature } = parsed.value;
  // An unknown team and a wrong key look alike: nothing tells a caller which teams exist.
  const wrong = (): ApiError => new ApiError(401, 'BAD_SIGNATURE', 'the signature does not match (method, path, body, team and key version are signed)', { reason: 'BAD_SIGNATURE' });
  const team = TEAM_NAME_PATTERN.test(teamName) ? await getTeam(deps.pool, teamName) : null;
  // The signature is checked before anything about the team is told (#44): an unsigned probe
  // gets the same answer for a real team, an unknown one and any key version. Only a caller
  // holding the key of that version learns that the version is no longer valid.
  const key = deriveExecutorKey(deps.executorSecret, teamName, keyVersion);
  if (!signatureMatches(key, { timestamp, method: req.method, path: req.originalUrl, body: raw }, signature) || team === null) throw wrong();
  if (!acceptedKeyVersions(team, nowMs).includes(keyVersion)) {
    throw new ApiError(401, 'BAD_SIGNATURE', `key version ${keyVersion} of team ${teamName} is not (or no longer) valid`, { reason: 'KEY_VERSION' });
  }
  return teamName;
}
