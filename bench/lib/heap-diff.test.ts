import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diffHeapSummaries, heapDiffMarkdown, summarizeHeapSnapshot } from './heap-diff.mjs';

/** A snapshot in V8's layout with the given nodes ([type index, name, self size]). */
function snapshotOf(nodes: Array<[number, string, number]>) {
  const strings: string[] = [];
  const at = (s: string) => (strings.includes(s) ? strings.indexOf(s) : strings.push(s) - 1);
  return {
    snapshot: { meta: { node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'], node_types: [['hidden', 'object', 'string', 'closure']] } },
    nodes: nodes.flatMap(([type, name, size], i) => [type, at(name), i + 1, size, 0]),
    strings,
  };
}

describe('summarizeHeapSnapshot and diffHeapSummaries', () => {
  it('sums up each kind and lists what grew, most added bytes first', () => {
    const before = summarizeHeapSnapshot(snapshotOf([[1, 'Map', 80], [2, 'abc', 16], [3, 'tick', 32]]));
    const after = summarizeHeapSnapshot(snapshotOf([[1, 'Map', 80], [1, 'Map', 80], [1, 'Entry', 40], [2, 'abc', 16], [2, 'xyz', 16], [3, 'tick', 32]]));
    // Strings are one kind whatever their text.
    expect(after.get('string')).toEqual({ count: 2, selfBytes: 32 });
    const diff = diffHeapSummaries(before, after);
    expect(diff.grew.map((r) => [r.kind, r.countDelta, r.bytesDelta])).toEqual([
      ['object Map', 1, 80],
      ['object Entry', 1, 40],
      ['string', 1, 16],
    ]);
    expect(diff.total).toEqual({ bytesBefore: 128, bytesAfter: 264, countBefore: 3, countAfter: 6 });
    expect(heapDiffMarkdown(diff, { label: 'x' })).toContain('| `object Map` | 1 → 2 | +1 |');
  });

  it('refuses what is not a heap snapshot with one line', () => {
    expect(() => summarizeHeapSnapshot({ nodes: [] })).toThrow(/not a V8 heap snapshot/);
  });

  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-heap-diff-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('finds 10,000 objects a real process kept between two of its snapshots', () => {
    // A small Node process writes a snapshot, keeps 10,000 instances of a class, writes another.
    const script = `
      const v8 = require('node:v8');
      class KeptForever { constructor(i) { this.i = i; } }
      const kept = [];
      v8.writeHeapSnapshot(${JSON.stringify(path.join(dir, 'a.heapsnapshot'))});
      for (let i = 0; i < 10000; i++) kept.push(new KeptForever(i));
      v8.writeHeapSnapshot(${JSON.stringify(path.join(dir, 'b.heapsnapshot'))});
      globalThis.kept = kept;`;
    execFileSync(process.execPath, ['-e', script], { stdio: 'ignore' });
    const read = (f: string) => summarizeHeapSnapshot(JSON.parse(readFileSync(path.join(dir, f), 'utf8')));
    const row = diffHeapSummaries(read('a.heapsnapshot'), read('b.heapsnapshot')).grew.find((r) => r.kind === 'object KeptForever');
    expect(row?.countBefore).toBe(0);
    expect(row?.countAfter).toBe(10_000);
  });
});
