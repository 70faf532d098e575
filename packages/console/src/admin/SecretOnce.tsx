/** A secret the API shows once (a token, a worker credential): in full, to copy, until dismissed. */
import type { ReactNode } from 'react';

export function SecretOnce({ title, secret, children, onClose }: { title: string; secret: string; children: ReactNode; onClose: () => void }) {
  return (
    <section className="secret-once" role="status" data-testid="secret-once">
      <strong>{title}</strong>
      <code className="secret-value" data-testid="secret">{secret}</code>
      <small>{children} It is shown this once: the server keeps only its hash.</small>
      <div className="actions">
        <button type="button" className="small" onClick={() => void navigator.clipboard?.writeText(secret)}>
          Copy
        </button>
        <button type="button" className="secondary outline small" onClick={onClose}>
          I have stored it
        </button>
      </div>
    </section>
  );
}
