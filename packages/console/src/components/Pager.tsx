import { useCallback, useState } from 'react';

/**
 * Cursor paging for the API's `{ items, nextCursor }` lists. The API only pages forward (older), so going
 * back (newer) needs the cursors already followed: a stack whose top is the page shown, empty on the first page.
 */
export interface PagerState {
  /** The cursor of the page shown (undefined on the first page), to pass as the list's `cursor` parameter. */
  cursor: string | undefined;
  /** Back to the first page, e.g. when the filters change. */
  reset: () => void;
  depth: number;
  older: (nextCursor: string) => void;
  newer: () => void;
}

export function usePager(): PagerState {
  const [cursors, setCursors] = useState<string[]>([]);
  const reset = useCallback(() => setCursors([]), []);
  const older = useCallback((next: string) => setCursors((c) => [...c, next]), []);
  const newer = useCallback(() => setCursors((c) => c.slice(0, -1)), []);
  return { cursor: cursors[cursors.length - 1], reset, depth: cursors.length, older, newer };
}

/**
 * "← Newer" while past the first page, "Older →" while the API says there is more; a list ordered
 * by name (tasks) says "← Previous" / "Next →".
 */
export function Pager({ pager, nextCursor, labels = ['← Newer', 'Older →'] }: { pager: PagerState; nextCursor: string | null | undefined; labels?: readonly [string, string] }) {
  return (
    <div className="pager">
      {pager.depth > 0 && (
        <button type="button" className="secondary outline small" onClick={pager.newer}>
          {labels[0]}
        </button>
      )}
      {nextCursor != null && (
        <button type="button" className="secondary outline small" onClick={() => pager.older(nextCursor)}>
          {labels[1]}
        </button>
      )}
    </div>
  );
}
