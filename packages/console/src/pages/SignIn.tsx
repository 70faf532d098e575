/** Sign-in with an API token (created with `POST /api/v1/tokens`, or AX_ADMIN_TOKEN); kept for this browser tab only. */
import { useState, type FormEvent } from 'react';
import { errorText } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { useSignIn } from '../session';

export function SignInPage() {
  const { signIn, notice } = useSignIn();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

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
          <p>Sign in with an API token. It is kept for this browser tab only (session storage) and sent to the admin API as a bearer token.</p>
        </header>
        {notice !== null && <p className="notice">{notice}</p>}
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
