/**
 * The line diff of two YAML texts (the stored task's against the draft's, or two kept versions):
 * removed lines red, added green, the rest folded. `against` names what `before` is.
 */
// The one pure module of core (its own export, no imports): core's index holds Node code that
// the browser bundle must not take.
// eslint-disable-next-line no-restricted-imports
import { diffHunks, diffLines, diffStats } from '@ax/core/line-diff';

export function DiffView({ before, after, against = 'the stored version' }: { before: string; after: string; against?: string }) {
  const lines = diffLines(before, after);
  const { added, removed } = diffStats(lines);
  if (added === 0 && removed === 0) {
    return (
      <p data-testid="diff-none" className="muted">
        No changes against {against}.
      </p>
    );
  }
  return (
    <>
      <p data-testid="diff-stats">
        <span className="diff-count-add">+{added}</span> / <span className="diff-count-del">−{removed}</span> line{added + removed === 1 ? '' : 's'} against {against}
      </p>
      <div className="diff" data-testid="diff" role="table" aria-label="Changes">
        {diffHunks(lines).map((hunk, h) => (
          <div key={h} role="rowgroup">
            {hunk.skipped > 0 && (
              <div className="diff-skip" role="row">
                … {hunk.skipped} unchanged line{hunk.skipped === 1 ? '' : 's'}
              </div>
            )}
            {hunk.lines.map((l, i) => (
              <div key={i} role="row" className={l.kind === 'add' ? 'diff-add' : l.kind === 'del' ? 'diff-del' : 'diff-same'} data-diff={l.kind}>
                <span className="sign" aria-hidden="true">
                  {l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}
                </span>
                {l.text}
              </div>
            ))}
          </div>
        ))}
      </div>
    </>
  );
}
