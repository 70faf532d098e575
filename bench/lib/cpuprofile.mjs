/**
 * Reader of V8 `.cpuprofile` files (written by `node --cpu-prof`): self time aggregated by
 * function and file, so "what dominates" is one sorted list. Pure: takes the parsed JSON.
 *
 * Self time of a node = the sum of the `timeDeltas` of the samples that hit it (each delta is
 * the time since the previous sample, so it is attributed to the sample it ends at, as
 * Chrome DevTools does). `(idle)` is kept apart: it is time the process waited.
 */

/**
 * Now on the clock of `.cpuprofile` files (CLOCK_MONOTONIC in µs, as `process.hrtime`): how a
 * scenario names the window of another process's profile.
 */
export function profileClockUs() {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Short form of a script URL: from `node_modules/<pkg>` or the repository's `packages/|services/`. */
export function shortUrl(url) {
  if (!url) return '';
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = clean.slice(nm + 'node_modules/'.length);
    const parts = rest.split('/');
    const pkgLen = parts[0]?.startsWith('@') ? 2 : 1;
    return `${parts.slice(0, pkgLen).join('/')}:${parts.slice(pkgLen).join('/')}`;
  }
  const repo = clean.search(/\/(packages|services|bench)\//);
  if (repo >= 0) return clean.slice(repo + 1);
  return clean;
}

/**
 * Aggregates one profile, optionally only the samples taken within `window` (`fromUs`/`toUs` on
 * the profile's clock: CLOCK_MONOTONIC in µs on Linux, the clock of `process.hrtime`, so another
 * process can name the window). Returns `{ totalMs, idleMs, busyMs, functions }` where `functions` is
 * `[{ name, url, selfMs, pct }]` sorted by self time (pct of busy time), idle excluded.
 */
function selfTimeByNode(profile, fromUs, toUs) {
  const selfUs = new Map();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let totalUs = 0;
  let at = profile.startTime ?? 0;
  for (let i = 0; i < samples.length; i++) {
    at += deltas[i] ?? 0;
    if (at < fromUs || at > toUs) continue;
    const dt = Math.max(0, deltas[i + 1] ?? 0);
    totalUs += dt;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + dt);
  }
  return { selfUs, totalUs };
}

const frameKey = (frame) => `${frame.functionName || '(anonymous)'}\u0000${shortUrl(frame.url)}:${(frame.lineNumber ?? -1) + 1}`;

/**
 * Inclusive (total) time of the functions whose file matches `urlPattern` (default: the
 * workspace's `packages/` and `services/`), counted once per stack even when recursive, sorted:
 * "which of our functions is the time spent under". Same window as `aggregateSelfTime`.
 */
export function aggregateInclusiveTime(profile, window = {}, urlPattern = /^(packages|services)\//) {
  const { selfUs } = selfTimeByNode(profile, window.fromUs ?? -Infinity, window.toUs ?? Infinity);
  const byId = new Map();
  const isChild = new Set();
  for (const node of profile.nodes ?? []) {
    byId.set(node.id, node);
    for (const c of node.children ?? []) isChild.add(c);
  }
  // inclusive time of every node, children before parents (iterative post-order)
  const inclusive = new Map();
  const roots = [...byId.keys()].filter((id) => !isChild.has(id));
  const stack = roots.map((id) => [id, false]);
  while (stack.length > 0) {
    const [id, done] = stack.pop();
    const node = byId.get(id);
    if (!node) continue;
    if (!done) {
      stack.push([id, true]);
      for (const c of node.children ?? []) stack.push([c, false]);
      continue;
    }
    let t = selfUs.get(id) ?? 0;
    for (const c of node.children ?? []) t += inclusive.get(c) ?? 0;
    inclusive.set(id, t);
  }
  let busyUs = 0;
  for (const [id, us] of selfUs) if (byId.get(id)?.callFrame.functionName !== '(idle)') busyUs += us;
  const agg = new Map();
  const walk = [...roots.map((id) => [id, new Set()])];
  while (walk.length > 0) {
    const [id, onPath] = walk.pop();
    const node = byId.get(id);
    if (!node) continue;
    const url = shortUrl(node.callFrame.url);
    let path = onPath;
    if (urlPattern.test(url)) {
      const key = frameKey(node.callFrame);
      if (!onPath.has(key)) {
        const e = agg.get(key) ?? { name: node.callFrame.functionName || '(anonymous)', url: `${url}:${(node.callFrame.lineNumber ?? -1) + 1}`, us: 0 };
        e.us += inclusive.get(id) ?? 0;
        agg.set(key, e);
        path = new Set(onPath).add(key);
      }
    }
    for (const c of node.children ?? []) walk.push([c, path]);
  }
  return [...agg.values()]
    .filter((e) => e.us > 0)
    .sort((a, b) => b.us - a.us)
    .map((e) => ({ name: e.name, url: e.url, totalMs: Math.round(e.us / 100) / 10, pct: busyUs > 0 ? Math.round((e.us / busyUs) * 1000) / 10 : 0 }));
}

export function aggregateSelfTime(profile, window = {}) {
  const fromUs = window.fromUs ?? -Infinity;
  const toUs = window.toUs ?? Infinity;
  const byId = new Map();
  for (const node of profile.nodes ?? []) byId.set(node.id, node);
  const { selfUs, totalUs } = selfTimeByNode(profile, fromUs, toUs);
  const agg = new Map();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame ?? { functionName: '(unknown)', url: '' };
    const name = frame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleUs += us;
      continue;
    }
    const url = shortUrl(frame.url);
    const line = frame.url ? `:${(frame.lineNumber ?? -1) + 1}` : '';
    const key = `${name}\u0000${url}${line}`;
    const entry = agg.get(key) ?? { name, url: `${url}${line}`, selfUs: 0 };
    entry.selfUs += us;
    agg.set(key, entry);
  }
  const busyUs = totalUs - idleUs;
  const functions = [...agg.values()]
    .sort((a, b) => b.selfUs - a.selfUs)
    .map((e) => ({
      name: e.name,
      url: e.url,
      selfMs: Math.round(e.selfUs / 100) / 10,
      pct: busyUs > 0 ? Math.round((e.selfUs / busyUs) * 1000) / 10 : 0,
    }));
  return {
    totalMs: Math.round(totalUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    functions,
  };
}

/** Package or area of a short URL: `mysql2`, `@ax/store`, `node:internal`, `(native)`. */
export function areaOf(url) {
  if (!url) return '(native/vm)';
  const ws = /^(packages|services)\/([^/]+)\//.exec(url);
  if (ws) return ws[1] === 'packages' ? `@ax/${ws[2]}` : `service ${ws[2]}`;
  if (url.startsWith('node:')) return 'node:internal';
  const pkg = /^([^:/]+|@[^:/]+\/[^:/]+):/.exec(url);
  if (pkg) return pkg[1];
  return 'other';
}

/** Busy time summed by area (see `areaOf`), sorted, with pct of busy time. */
export function aggregateByArea(aggregated) {
  const m = new Map();
  for (const f of aggregated.functions) {
    const area = f.name.startsWith('(') && !f.url ? f.name : areaOf(f.url);
    m.set(area, (m.get(area) ?? 0) + f.selfMs);
  }
  const busy = aggregated.busyMs || 1;
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([area, ms]) => ({ area, selfMs: Math.round(ms), pct: Math.round((ms / busy) * 1000) / 10 }));
}

/** Merges several aggregates (e.g. two workers' profiles) into one. */
export function mergeAggregates(list) {
  const m = new Map();
  let totalMs = 0;
  let idleMs = 0;
  let busyMs = 0;
  for (const a of list) {
    totalMs += a.totalMs;
    idleMs += a.idleMs;
    busyMs += a.busyMs;
    for (const f of a.functions) {
      const key = `${f.name}\u0000${f.url}`;
      const e = m.get(key) ?? { name: f.name, url: f.url, selfMs: 0 };
      e.selfMs += f.selfMs;
      m.set(key, e);
    }
  }
  const functions = [...m.values()]
    .sort((x, y) => y.selfMs - x.selfMs)
    .map((f) => ({ ...f, selfMs: Math.round(f.selfMs * 10) / 10, pct: busyMs > 0 ? Math.round((f.selfMs / busyMs) * 1000) / 10 : 0 }));
  return { totalMs, idleMs, busyMs, functions };
}
