/**
 * A line diff of two texts (a task's YAML against another's: the console's review before saving
 * an edit and its versions view, `axctl tasks diff`): longest common subsequence of lines, then
 * hunks with a few lines of context. Pure and without imports, so the console's browser bundle
 * takes it through the subpath `@ax/core/line-diff` without the rest of core.
 */

export type DiffKind = 'same' | 'add' | 'del';

export interface DiffLine {
  kind: DiffKind;
  text: string;
  /** 1-based line in the old text (same, del). */
  oldLine?: number;
  /** 1-based line in the new text (same, add). */
  newLine?: number;
}

/** One run of lines to show; `skipped` unchanged lines before it are folded away. */
export interface DiffHunk {
  skipped: number;
  lines: DiffLine[];
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Every line of both texts in order, each marked same / added / removed. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = length of the LCS of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i -= 1) {
    const row = lcs[i] as number[];
    const next = lcs[i + 1] as number[];
    for (let j = m - 1; j >= 0; j -= 1) {
      row[j] = a[i] === b[j] ? (next[j + 1] ?? 0) + 1 : Math.max(next[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i] as string, oldLine: i + 1, newLine: j + 1 });
      i += 1;
      j += 1;
    } else if (i < n && (j >= m || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      // Removed lines first, then what replaced them (as a reader expects).
      out.push({ kind: 'del', text: a[i] as string, oldLine: i + 1 });
      i += 1;
    } else {
      out.push({ kind: 'add', text: b[j] as string, newLine: j + 1 });
      j += 1;
    }
  }
  return out;
}

/** Counts of added and removed lines. */
export function diffStats(lines: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.kind === 'add') added += 1;
    else if (l.kind === 'del') removed += 1;
  }
  return { added, removed };
}

/** The changed lines with `context` unchanged lines around each change; the rest folded. */
export function diffHunks(lines: readonly DiffLine[], context = 3): DiffHunk[] {
  const keep = lines.map(() => false);
  lines.forEach((l, index) => {
    if (l.kind === 'same') return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k += 1) keep[k] = true;
  });
  const hunks: DiffHunk[] = [];
  let skipped = 0;
  let current: DiffHunk | null = null;
  lines.forEach((l, index) => {
    if (keep[index] === true) {
      if (current === null) {
        current = { skipped, lines: [] };
        hunks.push(current);
        skipped = 0;
      }
      current.lines.push(l);
    } else {
      current = null;
      skipped += 1;
    }
  });
  if (skipped > 0 && hunks.length > 0) hunks.push({ skipped, lines: [] });
  return hunks;
}
