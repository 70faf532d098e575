/** Reads the `.cpuprofile` files of a profile directory (one sub-directory per service). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { aggregateByArea, aggregateInclusiveTime, aggregateSelfTime, mergeAggregates } from './cpuprofile.mjs';

/**
 * `{ [service]: { files, totalMs, idleMs, busyMs, top, areas } }` for every service dir, from the
 * samples within `window` (see `aggregateSelfTime`).
 */
export function summarizeProfiles(dir, topN = 10, window = {}) {
  const out = {};
  if (!existsSync(dir)) return out;
  for (const service of readdirSync(dir).sort()) {
    const sdir = path.join(dir, service);
    const files = readdirSync(sdir).filter((f) => f.endsWith('.cpuprofile'));
    if (files.length === 0) continue;
    const profiles = files.map((f) => JSON.parse(readFileSync(path.join(sdir, f), 'utf8')));
    const merged = mergeAggregates(profiles.map((p) => aggregateSelfTime(p, window)));
    // inclusive time of ax's own functions, summed over the service's processes
    const inclusive = new Map();
    for (const p of profiles) {
      for (const e of aggregateInclusiveTime(p, window)) {
        const key = `${e.name}@${e.url}`;
        const prev = inclusive.get(key) ?? { name: e.name, url: e.url, totalMs: 0 };
        prev.totalMs += e.totalMs;
        inclusive.set(key, prev);
      }
    }
    const ours = [...inclusive.values()]
      .sort((a, b) => b.totalMs - a.totalMs)
      .slice(0, 8)
      .map((e) => ({ ...e, totalMs: Math.round(e.totalMs), pct: merged.busyMs > 0 ? Math.round((e.totalMs / merged.busyMs) * 1000) / 10 : 0 }));
    out[service] = {
      files: files.length,
      totalMs: merged.totalMs,
      idleMs: merged.idleMs,
      busyMs: merged.busyMs,
      top: merged.functions.slice(0, topN),
      areas: aggregateByArea(merged).slice(0, 8),
      inclusive: ours,
    };
  }
  return out;
}
