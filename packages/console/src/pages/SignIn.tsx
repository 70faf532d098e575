/**
 * Sign-in: through the company's OpenID provider when the admin API has one (`AX_OIDC_ISSUER`),
 * or with an API token (created with `POST /api/v1/tokens`, or AX_ADMIN_TOKEN), exchanged once
 * for a session cookie that every tab of this browser shares (#47, #48).
 */
import { useEffect, useState, type FormEvent } from 'react';
import { errorText, request } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { useSignIn } from '../session';

interface Methods {
  oidc: { loginUrl: string } | null;
}

export function SignInPage() {
  const { signIn, notice } = useSignIn();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [oidcUrl, setOidcUrl] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    // Without an answer the token form alone is offered: it always works.
    request<Methods>('GET', '/api/v1/auth/methods')
      .then((methods) => live && setOidcUrl(methods.oidc?.loginUrl ?? null))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const value = token.trim();
    if (value === '') {
      setError('Paste an API token.');
      return;
    }
    setBusy(true);
    try {
      await signIn(value);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <main className="container sign-in">
      <article>
        <header>
          <h1>ax console</h1>
          <p>
            Sign in once for every tab of this browser: the admin API keeps the session (an HttpOnly cookie here) until you sign out, it is idle too
            long, or its token is revoked.
          </p>
        </header>
        {notice !== null && <p className="notice">{notice}</p>}
        {oidcUrl !== null && (
          <p>
            <a role="button" href={oidcUrl} data-testid="oidc-sign-in">
              Sign in with your company account
            </a>
          </p>
        )}
        <form onSubmit={(e) => void submit(e)}>
          <label>
            API token
            <input
              type="password"
              name="token"
              autoComplete="current-password"
              required
              value={token}
              aria-invalid={error === null ? undefined : true}
              onChange={(e) => setToken(e.target.value)}
            />
          </label>
          <ErrorLine error={error} />
          <button type="submit" disabled={busy} aria-busy={busy}>
            Sign in
          </button>
        </form>
        <footer>
          <small>
            No token? <code>pnpm start</code> prints the admin token; an admin creates others with <code>POST /api/v1/tokens</code> (roles viewer,
            operator, admin).
          </small>
        </footer>
      </article>
    </main>
  );
}
