/**
 * OIDC sign-in for the console (#48): authorization code with PKCE against any OpenID provider
 * (`AX_OIDC_ISSUER`), through `openid-client` (a certified relying party). The login in flight
 * (state, nonce, PKCE verifier) rides in a short-lived HttpOnly cookie, so any admin-api
 * instance can finish what another began. The callback maps the role claim (`AX_OIDC_CLAIM`,
 * from the ID token, else from userinfo) through `AX_OIDC_ROLE_MAP` and starts a console session
 * (console-sessions.ts); the claim values are kept with it and mapped again on every request.
 */
import type { Request, Response } from 'express';
import * as client from 'openid-client';
import type { AppDeps } from './deps.js';
import { ApiError } from './errors.js';
import { claimValues, grantOf, type RoleMap } from './oidc-role-map.js';
import { secureFor, startSession } from './console-sessions.js';
import { readCookie, setCookie } from './session-cookie.js';

/** What `AX_OIDC_*` configure. */
export interface OidcSettings {
  readonly issuer: URL;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `AX_OIDC_REDIRECT_URI`: the console's `…/api/v1/auth/oidc/callback` as the browser reaches it. */
  readonly redirectUri: string;
  /** `AX_OIDC_SCOPES`, space-separated; `openid` is always asked. */
  readonly scopes: string;
  /** `AX_OIDC_CLAIM`: the claim whose values the role map reads (default `groups`). */
  readonly claim: string;
  readonly roleMap: RoleMap;
}

/** The OIDC sign-in of an app: its settings and the provider's metadata, discovered once. */
export interface OidcSignIn {
  readonly settings: OidcSettings;
  readonly roleMap: RoleMap;
  /** The provider's configuration (discovery on first use, retried after a failure). */
  configuration(): Promise<client.Configuration>;
}

/** The login cookie: lives ten minutes, sent only to the callback's path. */
const LOGIN_COOKIE = 'ax_oidc';
const LOGIN_PATH = '/api/v1/auth/oidc';
const LOGIN_MAX_AGE_S = 600;

/** Where the console shows why a sign-in failed (its sign-in page reads `signin_error`). */
function consoleWithError(message: string): string {
  return `/?signin_error=${encodeURIComponent(message)}`;
}

function isLoopback(url: URL): boolean {
  return url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
}

/** An OIDC sign-in whose provider is discovered on first use. */
export function createOidcSignIn(settings: OidcSettings): OidcSignIn {
  let discovered: Promise<client.Configuration> | undefined;
  return {
    settings,
    roleMap: settings.roleMap,
    configuration: () => {
      discovered ??= client
        .discovery(settings.issuer, settings.clientId, settings.clientSecret, undefined, {
          // http only for a provider on this machine (a laptop or a test); anything else must be https.
          ...(settings.issuer.protocol === 'http:' && isLoopback(settings.issuer) ? { execute: [client.allowInsecureRequests] } : {}),
        })
        .catch((err: unknown) => {
          discovered = undefined;
          throw err;
        });
      return discovered;
    },
  };
}

function oidcOf(deps: AppDeps): OidcSignIn {
  if (deps.oidc === undefined || deps.oidc === null) throw new ApiError(404, 'NOT_CONFIGURED', 'OIDC sign-in is not configured (AX_OIDC_ISSUER)');
  return deps.oidc;
}

async function providerConfiguration(deps: AppDeps, oidc: OidcSignIn): Promise<client.Configuration> {
  try {
    return await oidc.configuration();
  } catch (err) {
    deps.logger.warn({ err, issuer: oidc.settings.issuer.href }, 'OIDC discovery failed');
    throw new ApiError(503, 'UNAVAILABLE', `the OpenID provider ${oidc.settings.issuer.origin} does not answer its discovery document; try again later`, {}, { 'retry-after': '10' });
  }
}

/** `GET /api/v1/auth/oidc/login`: redirects the browser to the provider. */
export async function beginOidcLogin(deps: AppDeps, req: Request, res: Response): Promise<void> {
  const oidc = oidcOf(deps);
  const config = await providerConfiguration(deps, oidc);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const scopes = new Set(['openid', ...oidc.settings.scopes.split(/\s+/).filter((s) => s !== '')]);
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: oidc.settings.redirectUri,
    scope: [...scopes].join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  res.append('set-cookie', setCookie(LOGIN_COOKIE, `${state}.${nonce}.${verifier}`, { path: LOGIN_PATH, maxAgeSeconds: LOGIN_MAX_AGE_S, secure: secureFor(deps, req) }));
  res.redirect(302, url.href);
}

/** The claims of the sign-in: the ID token's, completed from userinfo when the role claim is not in it. */
async function claimsOf(config: client.Configuration, tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers, claim: string): Promise<Record<string, unknown>> {
  const idClaims = tokens.claims();
  if (idClaims === undefined) throw new Error('the provider answered no ID token');
  if (idClaims[claim] !== undefined) return idClaims;
  const info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
  return { ...info, ...idClaims };
}

function nameOf(claims: Record<string, unknown>): string {
  for (const key of ['preferred_username', 'email', 'name', 'sub']) {
    const value = claims[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return 'oidc-user';
}

/**
 * `GET /api/v1/auth/oidc/callback`: exchanges the code (PKCE, state and nonce checked by
 * openid-client), maps the claim and starts a session; redirects to the console, with
 * `signin_error` when the sign-in failed or the user's groups grant nothing.
 */
export async function finishOidcLogin(deps: AppDeps, req: Request, res: Response): Promise<void> {
  const oidc = oidcOf(deps);
  res.append('set-cookie', setCookie(LOGIN_COOKIE, '', { path: LOGIN_PATH, maxAgeSeconds: 0, secure: secureFor(deps, req) }));
  const [state, nonce, verifier] = (readCookie(req.headers.cookie, LOGIN_COOKIE) ?? '').split('.');
  if (state === undefined || nonce === undefined || verifier === undefined || verifier === '') {
    res.redirect(302, consoleWithError('the sign-in took too long or was started in another browser; sign in again'));
    return;
  }
  const config = await providerConfiguration(deps, oidc);
  const current = new URL(oidc.settings.redirectUri);
  current.search = new URL(req.originalUrl, 'http://callback.invalid').search;
  let claims: Record<string, unknown>;
  try {
    const tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    claims = await claimsOf(config, tokens, oidc.settings.claim);
  } catch (err) {
    deps.logger.warn({ err }, 'OIDC sign-in failed');
    const reason = err instanceof Error ? err.message : String(err);
    res.redirect(302, consoleWithError(`the OpenID provider's sign-in failed: ${reason.slice(0, 200)}`));
    return;
  }
  const subject = String(claims.sub);
  const groups = claimValues(claims[oidc.settings.claim]);
  const name = nameOf(claims);
  if (grantOf(oidc.roleMap, groups) === null) {
    deps.logger.warn({ subject, name, claim: oidc.settings.claim, values: groups.slice(0, 20) }, 'OIDC sign-in refused: no AX_OIDC_ROLE_MAP entry matches');
    res.redirect(302, consoleWithError(`${name} is signed in at the provider, but none of its ${oidc.settings.claim} grants access to ax; ask an admin`));
    return;
  }
  await startSession(deps, req, res, { kind: 'oidc', subject, name, groups });
  res.redirect(302, '/');
}
