import { describe, expect, it } from 'vitest';
import { diffHunks, diffLines, diffStats } from './line-diff.js';

describe('diffLines', () => {
  it('marks the changed line as removed then added, keeps the rest', () => {
    const d = diffLines('name: a\nexpr: "0 2 * * *"\nenabled: true\n', 'name: a\nexpr: "0 3 * * *"\nenabled: true\n');
    expect(d.map((l) => `${l.kind}:${l.text}`)).toEqual(['same:name: a', 'del:expr: "0 2 * * *"', 'add:expr: "0 3 * * *"', 'same:enabled: true']);
    expect(diffStats(d)).toEqual({ added: 1, removed: 1 });
    expect(d[1]).toMatchObject({ oldLine: 2 });
    expect(d[2]).toMatchObject({ newLine: 2 });
  });

  it('handles additions at the end and empty texts', () => {
    expect(diffLines('', 'a\nb').map((l) => l.kind)).toEqual(['add', 'add']);
    expect(diffLines('a\nb\n', '').map((l) => l.kind)).toEqual(['del', 'del']);
    expect(diffStats(diffLines('a\n', 'a\n'))).toEqual({ added: 0, removed: 0 });
    const d = diffLines('a\nb\n', 'a\nb\ndependsOn:\n  - task: x\n');
    expect(d.map((l) => l.kind)).toEqual(['same', 'same', 'add', 'add']);
  });
});

describe('diffHunks', () => {
  it('folds unchanged lines away from the changes', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
    const after = before.replace('l10', 'L10');
    const hunks = diffHunks(diffLines(before, after), 2);
    expect(hunks[0]?.skipped).toBe(8);
    expect(hunks[0]?.lines.map((l) => l.text)).toEqual(['l8', 'l9', 'l10', 'L10', 'l11', 'l12']);
    expect(hunks[1]).toEqual({ skipped: 7, lines: [] });
  });

  it('is empty when nothing changed', () => {
    expect(diffHunks(diffLines('a\nb', 'a\nb'))).toEqual([]);
  });
});
