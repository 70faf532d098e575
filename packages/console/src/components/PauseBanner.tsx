/**
 * The banner every page shows while dispatch is paused (issue #47: a global pause was invisible —
 * instances sat PENDING while the dashboard said "Running 0"). It reads `GET /api/v1/status`
 * every 10 s; an admin of every team can resume from it.
 */
import { useState } from 'react';
import { errorText } from '../api';
import { age } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import type { Status } from '../types';

/** How often every page re-reads the status: a pause shows within this. */
export const STATUS_REFRESH_MS = 10_000;

/** The status every page polls (one hook, so the banner and the dashboard agree). */
export function useStatus() {
  return useApi<Status>('/api/v1/status', {}, { refreshMs: STATUS_REFRESH_MS });
}

/** `paused 4 min ago by ops-admin: broker upgrade`. */
export function pauseSentence(d: Status['dispatch']): string {
  const when = d.since === undefined ? '' : ` ${age(d.since)}`;
  const by = d.by === undefined ? '' : ` by ${d.by}`;
  return `Dispatch paused${when}${by}${d.reason === undefined ? '' : `: ${d.reason}`}.`;
}

export function PauseBanner({ status }: { status: ReturnType<typeof useStatus> }) {
  const { client, principal } = useSession();
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
