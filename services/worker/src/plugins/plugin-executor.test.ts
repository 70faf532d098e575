import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@ax/kit';
import { repoRoot } from '@ax/testing';
import { liveGroupMembers } from '../process-group.js';
import { dispatchItem } from '../testing/fixtures.js';
import type { ExecutionRequest } from '../executors/types.js';
import { createPluginExecutor } from './plugin-executor.js';
import { loadPlugins, type PluginSet } from './plugin-registry.js';

// Plugin runs fork the compiled runner: `pnpm build` first.
const runnerPath = path.join(repoRoot(), 'services/worker/dist/plugins/plugin-runner.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-plugins-'));
let plugins: PluginSet;

beforeAll(async () => {
  cpSync(path.join(repoRoot(), 'examples/plugins/archive-files'), path.join(dir, 'archive-files'), { recursive: true });
  writeFileSync(path.join(dir, 'hang.mjs'), `export function run() { process.on('SIGTERM', () => {}); return new Promise(() => {}); }\n`);
  writeFileSync(path.join(dir, 'broken.mjs'), `throw new Error('cannot load me');\n`);
  writeFileSync(path.join(dir, 'norun.mjs'), `export const describe = () => ({ name: 'norun' });\n`);
  writeFileSync(path.join(dir, 'flaky.mjs'), `export async function run(ctx) { ctx.log('trying', ctx.config.n); throw new Error('flaky ' + ctx.config.n); }\n`);
  writeFileSync(path.join(dir, 'notes.txt'), 'not a plugin');
  plugins = await loadPlugins(dir, silentLogger());
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function request(name: string, config: Record<string, unknown>, timeoutSeconds = 30, onSpawn?: (pgid: number) => void): ExecutionRequest {
  const item = dispatchItem({ exec: { type: 'plugin', name, config }, timeoutSeconds, params: { n: 5 } });
  return { item, deadlineMs: Date.now() + timeoutSeconds * 1000, signal: new AbortController().signal, onSpawn };
}

describe('plugin executor', () => {
  it('a plugin that throws on load does not stop the others from loading; it is reported by name', () => {
    expect([...plugins.plugins.keys()].sort()).toEqual(['archive_files', 'flaky', 'hang']);
    expect(plugins.broken.map((b) => [b.name, b.error])).toEqual([
      ['broken', 'cannot load me'],
      ['norun', 'it exports no run function'],
    ]);
  });

  it('runs the example archive_files plugin in a child process with templates expanded', async () => {
    const source = path.join(dir, 'data');
    mkdirSync(source);
    writeFileSync(path.join(source, 'old.csv'), 'x');
    writeFileSync(path.join(source, 'new.csv'), 'y');
    utimesSync(path.join(source, 'old.csv'), new Date('2020-01-01'), new Date('2020-01-01'));
    const executor = createPluginExecutor({ plugins, outputTailBytes: 4096, runnerPath });
    const out = await executor.run(request('archive_files', { source, target: path.join(dir, 'archive', '{{bizDate}}'), olderThanDays: 7 }));
    expect(out).toMatchObject({ outcome: 'SUCCESS', data: { moved: 1 } });
    expect(out.outputTail).toContain('archived 1 file(s)');
    expect(readdirSync(path.join(dir, 'archive', '2026-12-01'))).toEqual(['old.csv']);
    expect(existsSync(path.join(source, 'new.csv'))).toBe(true);
  });

  it('a failing plugin, a broken one and an unknown one are failed attempts naming the cause', async () => {
    const executor = createPluginExecutor({ plugins, outputTailBytes: 4096, runnerPath });
    const flaky = await executor.run(request('flaky', { n: '{{params.n}}' }));
    expect(flaky).toMatchObject({ outcome: 'FAILED', error: 'flaky 5' });
    expect(flaky.outputTail).toContain('trying 5');
    expect(await executor.run(request('broken', {}))).toMatchObject({ outcome: 'FAILED', error: 'plugin broken failed to load on this worker: cannot load me' });
    expect(await executor.run(request('ghost', {}))).toMatchObject({ outcome: 'FAILED', error: 'no plugin named ghost on this worker' });
    expect(await executor.run(request('archive_files', { source: 1 }))).toMatchObject({ outcome: 'FAILED', error: 'config.source and config.target must be paths' });
  });

  it('a hanging plugin is killed at its timeout (TIMEOUT, no process left)', async () => {
    const executor = createPluginExecutor({ plugins, outputTailBytes: 4096, runnerPath, killGraceMs: 500 });
    let pgid = 0;
    const started = Date.now();
    const out = await executor.run(request('hang', {}, 1, (g) => (pgid = g)));
    expect(out).toMatchObject({ outcome: 'TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(pgid).toBeGreaterThan(0);
    expect(liveGroupMembers(pgid)).toEqual([]);
  });
});
