/**
 * The environment of console sign-in (docs/configuration.md "Console sign-in"): session
 * lifetimes and, when `AX_OIDC_ISSUER` is set, the OpenID provider, the client (id and secret,
 * each also as a `_FILE`), the callback URL and the role map. One source for names and defaults.
 */
import { intField, stringField, urlField } from '@ax/kit';
import { DEFAULT_SESSION_IDLE_S, DEFAULT_SESSION_MAX_S, type SessionLifetimes } from './console-sessions.js';
import type { OidcSettings } from './oidc.js';
import { roleMapField, type RoleMap } from './oidc-role-map.js';

/** Default of `AX_OIDC_CLAIM`. */
export const DEFAULT_OIDC_CLAIM = 'groups';
/** Default of `AX_OIDC_SCOPES`. */
export const DEFAULT_OIDC_SCOPES = 'openid profile email';

/** The fields, to spread into the service's config. */
export const signInFields = {
  /** `AX_SESSION_IDLE_S` — a console session unused this long ends. Default 3600. */
  sessionIdleSeconds: intField({ env: 'AX_SESSION_IDLE_S', unit: 's', min: 5, max: 2_592_000, default: DEFAULT_SESSION_IDLE_S }),
  /** `AX_SESSION_MAX_S` — a console session ends this long after sign-in, used or not. Default 43200. */
  sessionMaxSeconds: intField({ env: 'AX_SESSION_MAX_S', unit: 's', min: 5, max: 2_592_000, default: DEFAULT_SESSION_MAX_S }),
  /** `AX_OIDC_ISSUER` — the OpenID provider's issuer URL; unset = no OIDC sign-in. */
  oidcIssuer: urlField({ env: 'AX_OIDC_ISSUER', protocols: ['https:', 'http:'], sensitivity: 'public', optional: true }),
  /** `AX_OIDC_CLIENT_ID` (or `_FILE`) — the console's client id at the provider. */
  oidcClientId: stringField({ env: 'AX_OIDC_CLIENT_ID', expected: 'the client id registered at the provider', sensitivity: 'secret', optional: true }),
  /** `AX_OIDC_CLIENT_SECRET` (or `_FILE`) — its client secret. */
  oidcClientSecret: stringField({ env: 'AX_OIDC_CLIENT_SECRET', expected: 'the client secret registered at the provider', sensitivity: 'secret', optional: true }),
  /** `AX_OIDC_REDIRECT_URI` — `https://<console>/api/v1/auth/oidc/callback`, as registered at the provider. */
  oidcRedirectUri: urlField({ env: 'AX_OIDC_REDIRECT_URI', protocols: ['https:', 'http:'], sensitivity: 'public', optional: true }),
  /** `AX_OIDC_SCOPES` — scopes asked, space-separated (add the one that releases the role claim, e.g. `groups`). */
  oidcScopes: stringField({ env: 'AX_OIDC_SCOPES', expected: 'space-separated scopes such as "openid profile email groups"', pattern: /^[\x21\x23-\x5b\x5d-\x7e ]{1,1024}$/, default: DEFAULT_OIDC_SCOPES }),
  /** `AX_OIDC_CLAIM` — the claim whose values `AX_OIDC_ROLE_MAP` maps. Default `groups`. */
  oidcClaim: stringField({ env: 'AX_OIDC_CLAIM', expected: 'a claim name such as groups or roles', pattern: /^[A-Za-z0-9_:./-]{1,128}$/, default: DEFAULT_OIDC_CLAIM }),
  /** `AX_OIDC_ROLE_MAP` (or `_FILE`) — claim value → {role, teams}. */
  oidcRoleMap: roleMapField(),
};

/** What the fields resolved to. */
export interface SignInConfig {
  readonly sessionIdleSeconds: number;
  readonly sessionMaxSeconds: number;
  readonly oidcIssuer: string | undefined;
  readonly oidcClientId: string | undefined;
  readonly oidcClientSecret: string | undefined;
  readonly oidcRedirectUri: string | undefined;
  readonly oidcScopes: string;
  readonly oidcClaim: string;
  readonly oidcRoleMap: RoleMap | undefined;
}

export function sessionLifetimesOf(config: SignInConfig): SessionLifetimes {
  return { idleMs: config.sessionIdleSeconds * 1000, absoluteMs: config.sessionMaxSeconds * 1000 };
}

/**
 * The OIDC settings (null without `AX_OIDC_ISSUER`), or the problems that stop the service:
 * with an issuer, the client, the callback URL and the role map are all required.
 */
export function oidcSettingsOf(config: SignInConfig): { ok: true; value: OidcSettings | null } | { ok: false; problems: string[] } {
  if (config.oidcIssuer === undefined) {
    const stray = (['AX_OIDC_CLIENT_ID', 'AX_OIDC_CLIENT_SECRET', 'AX_OIDC_REDIRECT_URI', 'AX_OIDC_ROLE_MAP'] as const).filter((_, i) =>
      [config.oidcClientId, config.oidcClientSecret, config.oidcRedirectUri, config.oidcRoleMap][i] !== undefined,
    );
    return stray.length === 0 ? { ok: true, value: null } : { ok: false, problems: stray.map((v) => `${v} is set but AX_OIDC_ISSUER is not: set the issuer to turn OIDC sign-in on, or unset ${v}`) };
  }
  const problems: string[] = [];
  const need = (value: unknown, variable: string, what: string): void => {
    if (value === undefined) problems.push(`AX_OIDC_ISSUER is set, so ${variable} is required (${what})`);
  };
  need(config.oidcClientId, 'AX_OIDC_CLIENT_ID (or AX_OIDC_CLIENT_ID_FILE)', 'the client id registered at the provider');
  need(config.oidcClientSecret, 'AX_OIDC_CLIENT_SECRET (or AX_OIDC_CLIENT_SECRET_FILE)', 'the client secret');
  need(config.oidcRedirectUri, 'AX_OIDC_REDIRECT_URI', 'https://<console host>/api/v1/auth/oidc/callback');
  need(config.oidcRoleMap, 'AX_OIDC_ROLE_MAP (or AX_OIDC_ROLE_MAP_FILE)', 'which claim values grant which role and teams');
  if (config.oidcRedirectUri !== undefined && !new URL(config.oidcRedirectUri).pathname.endsWith('/api/v1/auth/oidc/callback')) {
    problems.push(`AX_OIDC_REDIRECT_URI must end with /api/v1/auth/oidc/callback (got ${config.oidcRedirectUri})`);
  }
  if (problems.length > 0 || config.oidcClientId === undefined || config.oidcClientSecret === undefined || config.oidcRedirectUri === undefined || config.oidcRoleMap === undefined) {
    return { ok: false, problems };
  }
  return {
    ok: true,
    value: {
      issuer: new URL(config.oidcIssuer),
      clientId: config.oidcClientId,
      clientSecret: config.oidcClientSecret,
      redirectUri: config.oidcRedirectUri,
      scopes: config.oidcScopes,
      claim: config.oidcClaim,
      roleMap: config.oidcRoleMap,
    },
  };
}
