import { describe, expect, it } from 'vitest';
import { aggregateByArea, aggregateInclusiveTime, aggregateSelfTime, areaOf, mergeAggregates, shortUrl, type CpuProfile } from './cpuprofile.mjs';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });
// root → main → (query, parse); idle and GC at the top level
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)') },
    { id: 2, callFrame: frame('main', 'file:///app/services/broker/dist/dispatch.js', 9) },
    { id: 3, callFrame: frame('query', 'file:///app/node_modules/.pnpm/mysql2@3/node_modules/mysql2/lib/connection.js', 99) },
    { id: 4, callFrame: frame('parse', 'file:///app/node_modules/@scope/pkg/index.js', 4) },
    { id: 5, callFrame: frame('(idle)') },
    { id: 6, callFrame: frame('(garbage collector)') },
    { id: 7, callFrame: frame('query', 'file:///app/node_modules/.pnpm/mysql2@3/node_modules/mysql2/lib/connection.js', 99) },
  ],
  // the delta of sample i+1 is the duration of sample i
  samples: [3, 3, 5, 4, 6, 7, 2],
  timeDeltas: [0, 1_000, 2_000, 10_000, 500, 1_500, 1_000, 3_000],
};

describe('aggregateSelfTime', () => {
  const agg = aggregateSelfTime(profile);
  it('attributes each time delta to the sample it ends, and keeps idle apart', () => {
    expect(agg.totalMs).toBe(19);
    expect(agg.idleMs).toBe(10);
    expect(agg.busyMs).toBe(9);
  });
  it('merges nodes of the same function and file, sorted by self time with % of busy', () => {
    expect(agg.functions[0]).toEqual({ name: 'query', url: 'mysql2:lib/connection.js:100', selfMs: 4, pct: 44.4 });
    expect(agg.functions.map((f) => f.name)).toEqual(['query', 'main', '(garbage collector)', 'parse']);
    expect(agg.functions.find((f) => f.name === '(garbage collector)')?.url).toBe('');
    expect(agg.functions.find((f) => f.name === 'parse')?.selfMs).toBe(0.5);
  });
  it('aggregates by area (package, workspace file, native)', () => {
    expect(aggregateByArea(agg).map((a) => a.area)).toEqual(['mysql2', 'service broker', '(garbage collector)', '@scope/pkg']);
  });
  it('merges profiles of several processes', () => {
    const both = mergeAggregates([agg, agg]);
    expect(both.busyMs).toBe(18);
    expect(both.functions[0]).toMatchObject({ name: 'query', selfMs: 8, pct: 44.4 });
  });
  it('keeps only the samples taken within a window of the profile clock', () => {
    // sample times: startTime + cumulative deltas = 101, 102, 104, 114, 114.5, 116, 117 ms
    const windowed = aggregateSelfTime({ ...profile, startTime: 100_000 }, { fromUs: 103_000, toUs: 114_600 });
    expect(windowed.idleMs).toBe(10);
    expect(windowed.functions.map((f) => [f.name, f.selfMs])).toEqual([
      ['(garbage collector)', 1.5],
      ['parse', 0.5],
    ]);
  });
  it('copes with an empty profile', () => {
    expect(aggregateSelfTime({})).toEqual({ totalMs: 0, idleMs: 0, busyMs: 0, functions: [] });
  });
});

describe('aggregateInclusiveTime', () => {
  // root → dispatch (broker) → load (store) → query (mysql2); dispatch → load again (recursion via
  // dispatch → dispatch → load) must count dispatch once per stack
  const f = (name: string, url: string) => ({ functionName: name, url, lineNumber: 0 });
  const tree: CpuProfile = {
    nodes: [
      { id: 1, callFrame: f('(root)', ''), children: [2, 7] },
      { id: 2, callFrame: f('dispatch', 'file:///w/services/broker/dist/d.js'), children: [3, 5] },
      { id: 3, callFrame: f('load', 'file:///w/packages/store/dist/q.js'), children: [4] },
      { id: 4, callFrame: f('query', 'file:///w/node_modules/mysql2/c.js') },
      { id: 5, callFrame: f('dispatch', 'file:///w/services/broker/dist/d.js'), children: [6] },
      { id: 6, callFrame: f('load', 'file:///w/packages/store/dist/q.js') },
      { id: 7, callFrame: f('(idle)', '') },
    ],
    samples: [4, 4, 6, 2, 7],
    timeDeltas: [0, 1_000, 1_000, 1_000, 1_000, 5_000],
  };
  it('sums the time under each workspace function once per stack, as % of busy time', () => {
    expect(aggregateInclusiveTime(tree)).toEqual([
      { name: 'dispatch', url: 'services/broker/dist/d.js:1', totalMs: 4, pct: 100 },
      { name: 'load', url: 'packages/store/dist/q.js:1', totalMs: 3, pct: 75 },
    ]);
  });
});

describe('shortUrl and areaOf', () => {
  it('shortens node_modules and workspace paths', () => {
    expect(shortUrl('file:///w/node_modules/.pnpm/undici@7/node_modules/undici/lib/core.js')).toBe('undici:lib/core.js');
    expect(shortUrl('file:///w/node_modules/@scope/pkg/a/b.js')).toBe('@scope/pkg:a/b.js');
    expect(shortUrl('file:///work/main/packages/store/dist/queries/x.js')).toBe('packages/store/dist/queries/x.js');
    expect(shortUrl('node:internal/streams/writable')).toBe('node:internal/streams/writable');
    expect(shortUrl('')).toBe('');
  });
  it('names the area of a short URL', () => {
    expect(areaOf('undici:lib/core.js:3')).toBe('undici');
    expect(areaOf('packages/store/dist/queries/x.js:1')).toBe('@ax/store');
    expect(areaOf('services/worker/dist/outbox.js:1')).toBe('service worker');
    expect(areaOf('node:internal/streams/writable:9')).toBe('node:internal');
    expect(areaOf('')).toBe('(native/vm)');
  });
});
