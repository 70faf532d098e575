/**
 * The banner every page shows while dispatch is paused (issue #47: a global pause was invisible —
 * instances sat PENDING while the dashboard said "Running 0"). It reads `GET /api/v1/status`
 * every 10 s; an admin of every team can resume from it.
 */
import { createContext, useContext, useState, type ReactNode } from 'react';
import { errorText } from '../api';
import { age } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import type { Status } from '../types';

/** How often every page re-reads the status: a pause shows within this. */
export const STATUS_REFRESH_MS = 10_000;

type StatusState = ReturnType<typeof useApi<Status>>;

const StatusContext = createContext<StatusState | null>(null);

/** Polls `GET /api/v1/status` once for the whole shell: the banner and the dashboard read the same answer. */
export function StatusProvider({ children }: { children: ReactNode }) {
  const status = useApi<Status>('/api/v1/status', {}, { refreshMs: STATUS_REFRESH_MS });
  return <StatusContext.Provider value={status}>{children}</StatusContext.Provider>;
}

/** The shell's status (a reload after a pause or resume refreshes the banner and the cards alike). */
export function useStatus(): StatusState {
  const status = useContext(StatusContext);
  if (status === null) throw new Error('useStatus outside StatusProvider');
  return status;
}

/** `paused 4 min ago by ops-admin: broker upgrade`. */
export function pauseSentence(d: Status['dispatch']): string {
  const when = d.since === undefined ? '' : ` ${age(d.since)}`;
  const by = d.by === undefined ? '' : ` by ${d.by}`;
  return `Dispatch paused${when}${by}${d.reason === undefined ? '' : `: ${d.reason}`}.`;
}

export function PauseBanner() {
  const { client, principal } = useSession();
  const status = useStatus();
  const [error, setError] = useState<string | null>(null);
  const d = status.data?.dispatch;
  if (d === undefined || !d.paused) return null;
  const admin = can(principal.role, 'admin') && (principal.teams === undefined || principal.teams.includes('*'));
  const resume = async () => {
    if (!window.confirm('Resume dispatching for every team?')) return;
    try {
      await client.post('/api/v1/dispatch/resume', {});
      setError(null);
      status.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <div className="pause-banner" role="status" data-testid="pause-banner">
      <span>
        <strong>{pauseSentence(d)}</strong> Due instances wait with reason DISPATCH_PAUSED; nothing new starts until it is resumed.
        {error !== null && <span className="error-inline"> {error}</span>}
      </span>
      {admin && (
        <button type="button" className="small" data-action="resume-dispatch" onClick={() => void resume()}>
          Resume
        </button>
      )}
    </div>
  );
}
