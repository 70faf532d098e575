/** A destructive action asked twice: the first click shows "Confirm" and "Cancel" in its place. */
import { useState } from 'react';

export function ConfirmButton({ label, confirmLabel, onConfirm, busy = false }: { label: string; confirmLabel: string; onConfirm: () => void; busy?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="secondary small" data-action={label.toLowerCase()} disabled={busy} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm-inline">
      <button type="button" className="small" data-action="confirm" disabled={busy} onClick={() => {
          setAsking(false);
          onConfirm();
        }}>
        {confirmLabel}
      </button>{' '}
      <button type="button" className="secondary outline small" data-action="cancel" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
