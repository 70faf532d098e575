/** The lines of a log with their numbers, search hits marked (the current one apart). */
import { memo, type ReactNode } from 'react';
import type { LogLine, LogMatch } from '../log-text';

function marked(text: string, columns: readonly number[], length: number, current: number | null): ReactNode[] {
  const out: ReactNode[] = [];
  let at = 0;
  for (const column of columns) {
    if (column > at) out.push(text.slice(at, column));
    out.push(
      <mark key={column} className={column === current ? 'log-hit current' : 'log-hit'} {...(column === current ? { 'data-current': 'true' } : {})}>
        {text.slice(column, column + length)}
      </mark>,
    );
    at = column + length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : bytes < 1_048_576 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

export interface LogLinesProps {
  lines: readonly LogLine[];
  matches: readonly LogMatch[];
  /** Index into `matches` of the current hit, or -1. */
  current: number;
  termLength: number;
}

export const LogLines = memo(function LogLines({ lines, matches, current, termLength }: LogLinesProps) {
  const byLine = new Map<number, number[]>();
  for (const m of matches) {
    const list = byLine.get(m.line);
    if (list === undefined) byLine.set(m.line, [m.column]);
    else list.push(m.column);
  }
  const hit = matches[current];
  return (
    <>
      {lines.map((line, index) =>
        line.kind === 'gap' ? (
          <div key={`gap-${index}`} className="log-line log-gap" data-gap={line.bytes}>
            <span className="log-n" />
            <span className="log-text">… {formatBytes(line.bytes)} dropped (the log was truncated) …</span>
          </div>
        ) : (
          <div key={index} className="log-line" data-line={line.n}>
            <span className="log-n">{line.n}</span>
            <span className="log-text">{byLine.has(index) ? marked(line.text, byLine.get(index) ?? [], termLength, hit?.line === index ? hit.column : null) : line.text}</span>
          </div>
        ),
      )}
    </>
  );
});

export { formatBytes };
