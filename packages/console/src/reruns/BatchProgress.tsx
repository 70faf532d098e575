/**
 * A batch's instances by state as one stacked bar (finished states left), with a legend of the
 * numbers unless `compact` (the list's rows). Each segment carries `data-state`/`data-count`.
 */
import type { InstanceState } from '../types';
import { finishedOf, segmentsOf } from './progress';

export function BatchProgress({ counts, total, compact = false }: { counts: Partial<Record<InstanceState, number>>; total: number; compact?: boolean }) {
  const segments = segmentsOf(counts);
  const finished = finishedOf(counts);
  const label = `${finished} of ${total} finished${segments.length === 0 ? '' : `: ${segments.map((s) => `${s.count} ${s.state}`).join(', ')}`}`;
  return (
    <div className={compact ? 'batch-progress compact' : 'batch-progress'} data-testid="batch-progress" data-finished={finished} data-total={total}>
      <div className="batch-bar" role="img" aria-label={label} title={label}>
        {segments.map((s) => (
          <span key={s.state} className={`batch-seg seg-${s.state}`} style={{ width: `${s.percent}%` }} data-state={s.state} data-count={s.count} />
        ))}
      </div>
      {!compact && (
        <ul className="batch-legend" data-testid="batch-legend">
          {segments.map((s) => (
            <li key={s.state} data-state={s.state} data-count={s.count}>
              <span className={`swatch seg-${s.state}`} aria-hidden="true" />
              {s.state} <strong>{s.count}</strong>
            </li>
          ))}
          <li className="batch-total">
            {finished} / {total} finished
          </li>
        </ul>
      )}
    </div>
  );
}
