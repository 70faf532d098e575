import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  assertNoLeftoverProcesses,
  freePort,
  repoRoot,
  runningProcesses,
  serviceEntry,
  startProcess,
  stopAllProcesses,
} from './processes.js';

afterAll(async () => {
  await stopAllProcesses({ graceMs: 1_000 });
  assertNoLeftoverProcesses();
});

/** Alive and not a zombie (an orphan's reaper may be slow). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** A node child that starts a grandchild, prints its pid, and keeps running. */
const parentScript = `
const { spawn } = require('node:child_process');
const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
console.log('grandchild ' + g.pid);
console.error('to stderr');
setInterval(() => {}, 1000);
`;

describe('startProcess', () => {
  it('stop() ends the child and its grandchild (the whole process group)', async () => {
    const proc = await startProcess({ name: 'parent', command: process.execPath, args: ['-e', parentScript], readyLine: /^grandchild \d+$/ });
    const line = await proc.waitForLine('grandchild');
    const grandchild = Number(line.split(' ')[1]);
    expect(isAlive(proc.pid)).toBe(true);
    expect(isAlive(grandchild)).toBe(true);
    expect(proc.liveGroupMembers().sort()).toEqual([proc.pid, grandchild].sort());
    await proc.waitForLine('to stderr');
    expect(proc.lines().map((l) => [l.stream, l.text])).toEqual([
      ['stdout', line],
      ['stderr', 'to stderr'],
    ]);
    expect(proc.output()).toContain('[parent stderr] to stderr');

    const exit = await proc.stop({ graceMs: 2_000 });
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(isAlive(proc.pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
    expect(runningProcesses()).not.toContain(proc);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const proc = await startProcess({
      name: 'stubborn',
      command: process.execPath,
      args: ['-e', "process.on('SIGTERM', () => console.log('ignoring')); console.log('up'); setInterval(() => {}, 1000)"],
      readyLine: 'up',
    });
    const started = Date.now();
    const exit = await proc.stop({ graceMs: 300 });
    expect(exit.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(proc.lines().map((l) => l.text)).toContain('ignoring');
  });

  it('waits for a readiness URL and passes env', async () => {
    const port = await freePort();
    const script = `
      const http = require('node:http');
      setTimeout(() => {
        const server = http.createServer((req, res) => res.end(process.env.GREETING));
        server.listen(Number(process.env.PORT), '127.0.0.1');
        process.on('SIGTERM', () => server.close(() => process.exit(0)));
      }, 300);`;
    const proc = await startProcess({
      name: 'http',
      command: process.execPath,
      args: ['-e', script],
      env: { PORT: String(port), GREETING: 'hello' },
      readyUrl: `http://127.0.0.1:${port}/healthz`,
    });
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('hello');
    expect(await proc.stop()).toEqual({ code: 0, signal: null });
  });

  it('fails with the output when the process exits before it is ready', async () => {
    const attempt = startProcess({
      name: 'bad-config',
      command: process.execPath,
      args: ['-e', 'console.error(\'ax: AX_ACK_TIMEOUT_MS="abc" is invalid\'); process.exit(2)'],
      readyUrl: `http://127.0.0.1:${await freePort()}/healthz`,
    });
    await expect(attempt).rejects.toThrow(/bad-config did not become ready: exited before it was ready: code=2[\s\S]*AX_ACK_TIMEOUT_MS="abc" is invalid/);
    expect(runningProcesses().map((p) => p.name)).not.toContain('bad-config');
  });

  it('fails and kills the process when readiness times out', async () => {
    const attempt = startProcess({
      name: 'never-ready',
      command: process.execPath,
      args: ['-e', "console.log('starting'); setInterval(() => {}, 1000)"],
      readyLine: 'listening',
      readyTimeoutMs: 300,
    });
    await expect(attempt).rejects.toThrow(/never-ready did not become ready: .*listening.*\n\[never-ready stdout\] starting/);
    expect(runningProcesses().map((p) => p.name)).not.toContain('never-ready');
  });

  it('fails clearly when the command does not exist', async () => {
    await expect(startProcess({ name: 'nope', command: '/nonexistent/binary' })).rejects.toThrow(/nope: cannot start/);
  });

  it('kill() signals the group and waitExit() reports how it ended', async () => {
    const proc = await startProcess({ name: 'k', command: process.execPath, args: ['-e', "console.log('up'); setInterval(() => {}, 1000)"], readyLine: 'up' });
    await expect(proc.waitExit(50)).rejects.toThrow(/did not exit within 50 ms/);
    proc.kill('SIGINT');
    expect(await proc.waitExit(5_000)).toEqual({ code: null, signal: 'SIGINT' });
    expect(proc.exitInfo).toEqual({ code: null, signal: 'SIGINT' });
    await proc.stop();
  });

  it('keeps only the last lines', async () => {
    const proc = await startProcess({
      name: 'chatty',
      command: process.execPath,
      args: ['-e', "for (let i = 0; i < 50; i++) console.log('line ' + i)"],
      keepLines: 10,
    });
    await proc.waitExit(5_000);
    await proc.waitForLine('line 49');
    expect(proc.lines().map((l) => l.text)).toEqual(Array.from({ length: 10 }, (_, i) => `line ${40 + i}`));
    await proc.stop();
  });

  it('hands every line to a listener, beyond the kept ones, until it unsubscribes', async () => {
    const proc = await startProcess({
      name: 'listened',
      command: process.execPath,
      args: ['-e', "console.log('ready'); setTimeout(() => { for (let i = 0; i < 50; i++) console.log('line ' + i); setTimeout(() => console.log('late'), 300); }, 300)"],
      keepLines: 5,
      readyLine: 'ready',
    });
    const seen: string[] = [];
    const off = proc.onLine((l) => {
      seen.push(l.text);
      if (l.text === 'line 49') off();
    });
    await proc.waitExit(5_000);
    await proc.waitForLine('late');
    // All 50 lines, though only 5 are kept; after 'line 49' it heard nothing more.
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => `line ${i}`));
    await proc.stop();
  });
});

describe('assertNoLeftoverProcesses', () => {
  it('fails for a process still running, and kills it', async () => {
    const proc = await startProcess({ name: 'leftover', command: process.execPath, args: ['-e', parentScript], readyLine: 'grandchild' });
    const grandchild = Number((await proc.waitForLine('grandchild')).split(' ')[1]);
    expect(() => assertNoLeftoverProcesses()).toThrow(/processes left running \(now killed\): leftover \(group \d+/);
    await proc.waitExit(5_000);
    await expect.poll(() => isAlive(grandchild)).toBe(false);
    await proc.stop();
    expect(() => assertNoLeftoverProcesses()).not.toThrow();
  });
});

describe('helpers', () => {
  it('freePort gives a usable port', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(1024);
    expect(port).toBeLessThan(65536);
  });

  it('serviceEntry points into services/<name>/dist/main.js under the repository root', () => {
    const root = repoRoot();
    expect(existsSync(path.join(root, 'pnpm-workspace.yaml'))).toBe(true);
    expect(serviceEntry('scheduler')).toBe(path.join(root, 'services', 'scheduler', 'dist', 'main.js'));
    expect(path.isAbsolute(serviceEntry('admin-api'))).toBe(true);
  });
});
