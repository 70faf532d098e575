/** The line diff of the stored YAML against the draft's: removed lines red, added green, the rest folded. */
import { diffHunks, diffLines, diffStats } from './line-diff';

export function DiffView({ before, after }: { before: string; after: string }) {
  const lines = diffLines(before, after);
  const { added, removed } = diffStats(lines);
  if (added === 0 && removed === 0) {
    return (
      <p data-testid="diff-none" className="muted">
        No changes against the stored version.
      </p>
    );
  }
  return (
    <>
      <p data-testid="diff-stats">
        <span className="diff-count-add">+{added}</span> / <span className="diff-count-del">−{removed}</span> line{added + removed === 1 ? '' : 's'} against the stored version
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
