/**
 * The built CLI as a process: usage errors exit 2 with one line, an unreachable API and a bad
 * token exit 1 with one line, `--help` of every command exits 0. No stack trace ever.
 */
import { createServer } from 'node:net';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axctl, axctlIn, killLeftovers, startApp, type AxctlResult, type TestApp } from './axctl.test-helper.js';
import { COMMANDS, run } from './main.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  expect(killLeftovers()).toBe(0);
  await t?.close();
});

/** Exactly one stderr line, no stack trace, nothing on stdout. */
function oneErrorLine(r: AxctlResult, code: number): string {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.errLines).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at |Error:/);
  return r.errLines[0] ?? '';
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('usage errors exit 2 with one line', () => {
  it('from the built binary', async () => {
    expect(oneErrorLine(await axctl(t, []), 2)).toBe('axctl: missing command (see axctl --help)');
    expect(oneErrorLine(await axctl(t, ['tasks', 'list', '--bogus']), 2)).toBe('axctl: tasks list: unknown option --bogus (see axctl tasks list --help)');
    expect(oneErrorLine(await axctl(t, ['rerun', 'failed', '--biz-date', '2026-13-01', '--reason', 'r']), 2)).toBe('axctl: --biz-date: expected YYYY-MM-DD, got "2026-13-01"');
  });

  it.each([
    [[], 'axctl: missing command (see axctl --help)'],
    [['frobnicate'], 'axctl: unknown command "frobnicate" (see axctl --help)'],
    [['tasks'], 'axctl: tasks: missing command (see axctl tasks --help)'],
    [['tasks', 'explode'], 'axctl: tasks: unknown command "explode" (see axctl tasks --help)'],
    [['tasks', 'list', '--bogus'], 'axctl: tasks list: unknown option --bogus (see axctl tasks list --help)'],
    [['tasks', 'get'], 'axctl: tasks get: missing <name> (see axctl tasks get --help)'],
    [['tasks', 'get', 'a', 'b'], 'axctl: tasks get: unexpected argument "b" (see axctl tasks get --help)'],
    [['tasks', 'apply'], 'axctl: tasks apply: --file is required (see axctl tasks apply --help)'],
    [['tasks', 'trigger', 'x', '--biz-date', '2026-13-01'], 'axctl: --biz-date: expected YYYY-MM-DD, got "2026-13-01"'],
    [['tasks', 'trigger', 'x', '--param', 'oops'], 'axctl: --param: expected key=value, got "oops"'],
    [['instances', 'list', '--limit', '0'], 'axctl: --limit: expected an integer from 1 to 500, got "0"'],
    [['rerun', 'instance', '1'], 'axctl: rerun instance: --reason is required (see axctl rerun instance --help)'],
    [['rerun', 'dag', '--root', 'a', '--reason', 'r'], 'axctl: rerun dag: --biz-date is required (see axctl rerun dag --help)'],
    [['rerun', 'backfill', '--task', 'a', '--from', '2026-12-02', '--to', '2026-12-01', '--reason', 'r'], 'axctl: --to: 2026-12-01 is before --from 2026-12-02'],
    [['workers', 'drain'], 'axctl: workers drain: missing <id> (see axctl workers drain --help)'],
    [['tail', '--timeout', 'soon'], 'axctl: --timeout: expected a positive number of seconds, got "soon"'],
    [['tasks', 'list', '--url', 'not a url'], 'axctl: --url: expected an http(s) URL, got "not a url"'],
  ])('axctl %j', async (args, line) => {
    expect(oneErrorLine(await axctlIn(t, args), 2)).toBe(line);
  });
});

describe('failures exit 1 with one line', () => {
  it('an unreachable URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    expect(oneErrorLine(await axctl(t, ['tasks', 'list'], { url }), 1)).toBe(`axctl: cannot reach ${url}: connection refused`);
  });

  it('a bad token (401) and a missing one', async () => {
    const bad = oneErrorLine(await axctl(t, ['tasks', 'list'], { token: 'not-a-real-token' }), 1);
    expect(bad).toMatch(/^axctl: tasks list: .+ \(401 UNAUTHENTICATED\); check AX_TOKEN or --token$/);
    expect(oneErrorLine(await axctlIn(t, ['workers'], { token: null }), 1)).toMatch(/\(401 UNAUTHENTICATED\)/);
    // --token overrides AX_TOKEN
    expect((await axctlIn(t, ['tasks', 'list', '--token', t.tokens.viewer], { token: 'not-a-real-token' })).code).toBe(0);
  });

  it('a file that cannot be read', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'axctl-'));
    try {
      expect(oneErrorLine(await axctl(t, ['tasks', 'apply', '-f', path.join(dir, 'missing.yaml')]), 1)).toBe(`axctl: tasks apply: cannot read ${path.join(dir, 'missing.yaml')}: no such file`);
      writeFileSync(path.join(dir, 'empty.yaml'), '');
      const empty = await axctlIn(t, ['tasks', 'apply', '-f', path.join(dir, 'empty.yaml')]);
      expect(empty.code).toBe(1);
      expect(empty.errLines).toEqual([`axctl: tasks apply: ${path.join(dir, 'empty.yaml')} is not valid, nothing was applied (400 VALIDATION_FAILED):`, '  a YAML body is required']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('help', () => {
  it('axctl --help lists every command and exits 0', async () => {
    const r = await axctl(t, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    for (const c of COMMANDS) expect(r.stdout).toContain(`  ${c.name} `);
  });

  it('every command and group has --help (exit 0, usage line and its options)', async () => {
    for (const c of COMMANDS) {
      const out: string[] = [];
      const err: string[] = [];
      const code = await run([...c.name.split(' '), '--help'], { env: {}, io: { out: (l) => out.push(l), err: (l) => err.push(l), write: () => Promise.resolve() } });
      expect(code, c.name).toBe(0);
      expect(err).toEqual([]);
      expect(out[0]).toBe(`usage: axctl ${c.name}${c.synopsis === '' ? '' : ` ${c.synopsis}`}`);
      for (const option of Object.keys(c.options)) expect(out.join('\n'), `${c.name} --${option}`).toContain(`--${option}`);
    }
    for (const group of ['tasks', 'instances', 'rerun', 'teams']) {
      const out: string[] = [];
      expect(await run([group, '-h'], { env: {}, io: { out: (l) => out.push(l), err: () => undefined, write: () => Promise.resolve() } })).toBe(0);
      expect(out[0]).toBe(`usage: axctl ${group} <command> [options]`);
    }
  });
});
