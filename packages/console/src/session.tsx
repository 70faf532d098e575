/**
 * Sign-in state: the token lives in `sessionStorage` (gone when the tab closes, never in
 * localStorage or a cookie) together with the role and teams `GET /api/v1/whoami` reported for it.
 * A 401 on any later request (token revoked) signs out with the API's message.
 */
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { createClient, request, type ApiClient, type ApiError } from './api';
import { isRole } from './roles';
import type { Principal } from './types';

const TOKEN_KEY = 'ax.console.token';
const PRINCIPAL_KEY = 'ax.console.principal';

interface Stored {
  token: string;
  principal: Principal;
}

/** What is kept of a whoami answer (or of a stored copy): name, role and, when given, teams. */
function principalOf(value: unknown): Principal | null {
  if (typeof value !== 'object' || value === null) return null;
  const { name, role, teams } = value as { name?: unknown; role?: unknown; teams?: unknown };
  if (typeof name !== 'string' || !isRole(role)) return null;
  const teamList = Array.isArray(teams) && teams.every((t) => typeof t === 'string') ? teams : undefined;
  return teamList === undefined ? { name, role } : { name, role, teams: teamList };
}

function readStored(): Stored | null {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const raw = sessionStorage.getItem(PRINCIPAL_KEY);
  if (token === null || raw === null) return null;
  try {
    const principal = principalOf(JSON.parse(raw));
    return principal === null ? null : { token, principal };
  } catch (_corrupt) {
    return null;
  }
}

/** What pages use. */
export interface Session {
  readonly principal: Principal;
  readonly client: ApiClient;
  signOut: (message?: string) => void;
}

interface SessionState {
  session: Session | null;
  /** Why the user is on the sign-in page (expired token), if anything. */
  notice: string | null;
  signIn: (token: string) => Promise<void>;
}

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [stored, setStored] = useState<Stored | null>(readStored);
  const [notice, setNotice] = useState<string | null>(null);

  const signOut = useCallback((message?: string) => {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(PRINCIPAL_KEY);
    setNotice(message ?? null);
    setStored(null);
  }, []);

  const signIn = useCallback(async (token: string) => {
    const principal = principalOf(await request<unknown>(token, 'GET', '/api/v1/whoami'));
    if (principal === null) throw new Error('the admin API did not say who the token is');
    sessionStorage.setItem(TOKEN_KEY, token);
    sessionStorage.setItem(PRINCIPAL_KEY, JSON.stringify(principal));
    setNotice(null);
    setStored({ token, principal });
  }, []);

  const session = useMemo<Session | null>(() => {
    if (stored === null) return null;
    const client = createClient(stored.token, (err: ApiError) => signOut(`Signed out: ${err.message}`));
    return { principal: stored.principal, client, signOut };
  }, [stored, signOut]);

  const state = useMemo(() => ({ session, notice, signIn }), [session, notice, signIn]);
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
