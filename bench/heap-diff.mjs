/**
 * Compares two V8 heap snapshots of one process (issue #23): what kinds of objects it kept more
 * of. The soak runs it for each process it took snapshots of (`--heap-snapshots-s`); by hand:
 *
 *   node --max-old-space-size=8192 bench/heap-diff.mjs --before A.heapsnapshot --after B.heapsnapshot [--top 30] [--label broker-2]
 *
 * Prints a Markdown table (bench/lib/heap-diff.mjs). A snapshot takes about 2× its heap to parse.
 */
import { readFileSync } from 'node:fs';
import { args } from './lib/harness.mjs';
import { diffHeapSummaries, heapDiffMarkdown, summarizeHeapSnapshot } from './lib/heap-diff.mjs';

const a = args();
const top = a.top === undefined ? 30 : Number(a.top);
if (!a.before || !a.after || !Number.isInteger(top) || top < 1) {
  process.stderr.write('bench/heap-diff.mjs: --before and --after name .heapsnapshot files; --top is a positive integer\n');
  process.exit(2);
}
const read = (file) => {
  try {
    return summarizeHeapSnapshot(JSON.parse(readFileSync(file, 'utf8')));
  } catch (error) {
    process.stderr.write(`bench/heap-diff.mjs: ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
};
process.stdout.write(heapDiffMarkdown(diffHeapSummaries(read(a.before), read(a.after), { top }), { label: a.label }));
