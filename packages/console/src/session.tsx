/**
 * Sign-in state (#47): the admin API keeps the session and the browser only an HttpOnly cookie,
 * so signing in once serves every tab. On load the console asks `GET /api/v1/session`; a pasted
 * token is exchanged once for a session (`POST /api/v1/session`), OIDC sign-in comes back from
 * the provider with the cookie set. The CSRF token of writes is kept in memory (api.ts). A 401 on
 * any later request (signed out in another tab, expired, token revoked) shows the sign-in page
 * with the API's message; sign-out ends the session on the server.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { createClient, request, setCsrfToken, type ApiClient, type ApiError } from './api';
import { isRole } from './roles';
import type { Principal } from './types';

/** What is kept of a session answer: name, role, teams and the CSRF token. */
function sessionOf(value: unknown): { principal: Principal; csrfToken: string | null } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { name, role, teams, csrfToken } = value as { name?: unknown; role?: unknown; teams?: unknown; csrfToken?: unknown };
  if (typeof name !== 'string' || !isRole(role)) return null;
  const teamList = Array.isArray(teams) && teams.every((t) => typeof t === 'string') ? teams : undefined;
  return { principal: teamList === undefined ? { name, role } : { name, role, teams: teamList }, csrfToken: typeof csrfToken === 'string' ? csrfToken : null };
}

/** What pages use. */
export interface Session {
  readonly principal: Principal;
  readonly client: ApiClient;
  signOut: (message?: string) => void;
}

interface SessionState {
  session: Session | null;
  /** Still asking the admin API whether this browser has a session. */
  checking: boolean;
  /** Why the user is on the sign-in page (expired session, failed OIDC sign-in), if anything. */
  notice: string | null;
  signIn: (token: string) => Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

/** `?signin_error=…` the OIDC callback redirects with, taken off the address bar once read. */
function takeSignInError(): string | null {
  const params = new URLSearchParams(window.location.search);
  const error = params.get('signin_error');
  if (error === null) return null;
  params.delete('signin_error');
  const rest = params.toString();
  window.history.replaceState(null, '', `${window.location.pathname}${rest === '' ? '' : `?${rest}`}${window.location.hash}`);
  return `Sign-in failed: ${error}`;
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [principal, setPrincipal] = useState<Principal | null>(null);
  const [checking, setChecking] = useState(true);
  const [notice, setNotice] = useState<string | null>(takeSignInError);

  const accept = useCallback((answer: unknown) => {
    const session = sessionOf(answer);
    if (session === null) throw new Error('the admin API did not say who is signed in');
    setCsrfToken(session.csrfToken);
    setNotice(null);
    setPrincipal(session.principal);
  }, []);

  useEffect(() => {
    let live = true;
    // Always 200: no session is `signedIn: false` (with the reason when one just ended), not an error in the browser's log.
    request<{ signedIn?: unknown; reason?: unknown; session?: unknown }>('GET', '/api/v1/session')
      .then((answer) => {
        if (!live) return;
        if (answer.signedIn === true) accept(answer.session);
        else if (typeof answer.reason === 'string') setNotice(answer.reason);
      })
      .catch((err: unknown) => live && setNotice(err instanceof Error ? err.message : String(err)))
      .finally(() => live && setChecking(false));
    return () => {
      live = false;
    };
  }, [accept]);

  const forget = useCallback((message?: string) => {
    setCsrfToken(null);
    setNotice(message ?? null);
    setPrincipal(null);
  }, []);

  const signOut = useCallback(
    (message?: string) => {
      // Ends the session on the server (every tab); the page goes to sign-in whatever it answers.
      request('DELETE', '/api/v1/session').catch(() => undefined).finally(() => forget(message));
    },
    [forget],
  );

  const signIn = useCallback(
    async (token: string) => {
      accept(await request<unknown>('POST', '/api/v1/session', {}, { authorization: `Bearer ${token}` }));
    },
    [accept],
  );

  const session = useMemo<Session | null>(() => {
    if (principal === null) return null;
    const client = createClient((err: ApiError) => forget(`Signed out: ${err.message}`));
    return { principal, client, signOut };
  }, [principal, signOut, forget]);

  const state = useMemo(() => ({ session, checking, notice, signIn }), [session, checking, notice, signIn]);
  return <SessionContext.Provider value={state}>{children}</SessionContext.Provider>;
}

function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (state === null) throw new Error('useSession outside SessionProvider');
  return state;
}

/** Sign-in state (for the sign-in page and the shell). */
export const useSignIn = useSessionState;

/** The signed-in session; only rendered under the signed-in shell. */
export function useSession(): Session {
  const { session } = useSessionState();
  if (session === null) throw new Error('useSession without a session');
  return session;
}
