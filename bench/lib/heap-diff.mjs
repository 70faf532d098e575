/**
 * What a process keeps more of between two V8 heap snapshots (issue #23, the soak's growth
 * check): each snapshot is summed up per kind of object — its node type and name, e.g.
 * `object Map`, `closure runOne`, `string` — as a count and a self size, and the two summaries
 * are compared. A leak shows as one kind whose count grows with the run while the rest stays.
 *
 * Pure: `summarizeHeapSnapshot` takes the parsed `.heapsnapshot` JSON (as written by
 * `--heapsnapshot-signal` or `v8.writeHeapSnapshot`), nothing is read here.
 */

/** Node types whose names are values, not kinds: each is summed up under its type alone. */
const VALUE_TYPES = new Set(['string', 'concatenated string', 'sliced string', 'number', 'heap number', 'bigint']);

/**
 * `Map<kind, { count, selfBytes }>` of one snapshot. `kind` is `<type> <name>` (the name cut at
 * 80 characters), or the type alone for strings and numbers.
 */
export function summarizeHeapSnapshot(snapshot) {
  const meta = snapshot?.snapshot?.meta;
  if (!meta || !Array.isArray(snapshot.nodes) || !Array.isArray(snapshot.strings)) {
    throw new Error('not a V8 heap snapshot: snapshot.meta, nodes or strings missing');
  }
  const fields = meta.node_fields;
  const stride = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  if (typeAt < 0 || nameAt < 0 || sizeAt < 0) throw new Error('heap snapshot: node_fields lack type, name or self_size');
  const types = meta.node_types[typeAt];
  const { nodes, strings } = snapshot;
  const out = new Map();
  for (let i = 0; i < nodes.length; i += stride) {
    const type = types[nodes[i + typeAt]] ?? String(nodes[i + typeAt]);
    const kind = VALUE_TYPES.has(type) ? type : `${type} ${String(strings[nodes[i + nameAt]] ?? '').slice(0, 80)}`;
    const entry = out.get(kind);
    if (entry) {
      entry.count += 1;
      entry.selfBytes += nodes[i + sizeAt];
    } else out.set(kind, { count: 1, selfBytes: nodes[i + sizeAt] });
  }
  return out;
}

/**
 * The kinds that grew from `before` to `after`, most added bytes first: `{ kind, countBefore,
 * countAfter, countDelta, bytesBefore, bytesAfter, bytesDelta }`, at most `top` rows, and the
 * totals of both snapshots.
 */
export function diffHeapSummaries(before, after, { top = 30 } = {}) {
  const kinds = new Set([...before.keys(), ...after.keys()]);
  const rows = [];
  const total = { bytesBefore: 0, bytesAfter: 0, countBefore: 0, countAfter: 0 };
  for (const kind of kinds) {
    const a = before.get(kind) ?? { count: 0, selfBytes: 0 };
    const b = after.get(kind) ?? { count: 0, selfBytes: 0 };
    total.bytesBefore += a.selfBytes;
    total.bytesAfter += b.selfBytes;
    total.countBefore += a.count;
    total.countAfter += b.count;
    rows.push({ kind, countBefore: a.count, countAfter: b.count, countDelta: b.count - a.count, bytesBefore: a.selfBytes, bytesAfter: b.selfBytes, bytesDelta: b.selfBytes - a.selfBytes });
  }
  rows.sort((x, y) => y.bytesDelta - x.bytesDelta || y.countDelta - x.countDelta);
  return { total, grew: rows.filter((r) => r.bytesDelta > 0 || r.countDelta > 0).slice(0, top) };
}

/** The diff as a Markdown table (sizes in KB). */
export function heapDiffMarkdown({ total, grew }, { label = '' } = {}) {
  const kb = (b) => (Math.round(b / 102.4) / 10).toLocaleString('en-US');
  const n = (x) => x.toLocaleString('en-US');
  const lines = [
    `${label ? `**${label}**: ` : ''}self size ${kb(total.bytesBefore)} KB → ${kb(total.bytesAfter)} KB, objects ${n(total.countBefore)} → ${n(total.countAfter)}`,
    '',
    '| kind | count | Δ count | self KB | Δ KB |',
    '|---|---|---|---|---|',
    ...grew.map((r) => `| \`${r.kind.replaceAll('|', '\\|').replaceAll('`', "'")}\` | ${n(r.countBefore)} → ${n(r.countAfter)} | ${r.countDelta >= 0 ? '+' : ''}${n(r.countDelta)} | ${kb(r.bytesBefore)} → ${kb(r.bytesAfter)} | ${r.bytesDelta >= 0 ? '+' : ''}${kb(r.bytesDelta)} |`),
  ];
  return `${lines.join('\n')}\n`;
}
