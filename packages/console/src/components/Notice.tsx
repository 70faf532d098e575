import type { ReactNode } from 'react';

/** A success note after an action (e.g. "Triggered: instance #42"), dismissable. */
export function Notice({ children, onClose }: { children: ReactNode; onClose: () => void }) {
  return (
    <p className="notice" role="status">
      <span>{children}</span>
      <button type="button" className="secondary outline small" aria-label="Dismiss" onClick={onClose}>
        ×
      </button>
    </p>
  );
}
