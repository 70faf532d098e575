/**
 * axctl outside the workspace: `scripts/pack-axctl.mjs` makes axctl-<version>.tgz, which npm
 * installs globally into a temporary prefix with no registry (offline, an unreachable registry
 * URL, an empty npm config); the installed `axctl` then runs against nothing (exit 1, one line)
 * and against a real admin API (its own test database). Also the checkout's launcher,
 * `node scripts/axctl.mjs` (the root script `pnpm axctl`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
/* eslint-disable import-x/no-relative-packages -- test harness: the admin API in-process with its own database, as the CLI's tests run it. */
import { startTestApp, type TestApp } from '../services/admin-api/src/harness.test-helper.js';
/* eslint-enable import-x/no-relative-packages */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string }).version;
const ROOT_SCRIPTS = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a process started here: no npm/pnpm script variables (this test may itself
 * run under `pnpm test`), no AX_* settings, this Node first on PATH (for `#!/usr/bin/env node`).
 */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(npm_|pnpm_)/i.test(key) || ['INIT_CWD', 'AX_URL', 'AX_TOKEN', 'NODE_OPTIONS'].includes(key)) continue;
    env[key] = value;
  }
  env['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${env['PATH'] ?? ''}`;
  return { ...env, ...extra };
}

function runProcess(command: string, args: readonly string[], opts: { cwd?: string; env?: Record<string, string>; stdin?: string; timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.end(opts.stdin ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** stderr lines, without the launcher's note that it (re)built packages/cli first. */
function errLines(r: Result): string[] {
  return r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('axctl: building packages/cli'));
}

/** A TCP port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The files of a .tgz (a tar in gzip), by name. */
function untar(tgz: string): Map<string, Buffer> {
  const tar = gunzipSync(readFileSync(tgz));
  const files = new Map<string, Buffer>();
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    if (name === '') break;
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    files.set(name, tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

const TASK_YAML = `name: install_probe
description: created by the installed axctl
schedule: {type: none}
exec: {type: http, url: "http://orders.internal:8080/ax/install_probe"}
`;

let dir: string;
let app: TestApp;
let tarball: string;
let axctlBin: string;
let refusedUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'axctl-install-'));
  refusedUrl = `http://127.0.0.1:${await closedPort()}`;
  const started = startTestApp();
  // Pack into a folder of its own.
  const pack = await runProcess(process.execPath, [path.join(ROOT, 'scripts/pack-axctl.mjs'), path.join(dir, 'out')], { timeoutMs: 50_000 });
  if (pack.code !== 0) throw new Error(`pack-axctl failed (${pack.code}):\n${pack.stderr}`);
  tarball = pack.stdout.trim();
  // Install it as an operator would, with no registry to fall back on.
  const prefix = path.join(dir, 'prefix');
  const npmrc = path.join(dir, 'npmrc');
  writeFileSync(npmrc, '');
  const npmFlags = ['--offline', '--registry', 'http://127.0.0.1:9/', '--cache', path.join(dir, 'npm-cache'), '--userconfig', npmrc, '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
  mkdirSync(prefix);
  const install = await runProcess('npm', ['install', '--global', '--prefix', prefix, tarball, ...npmFlags], { cwd: dir, timeoutMs: 50_000 });
  if (install.code !== 0) throw new Error(`npm install -g failed (${install.code}):\n${install.stderr}`);
  axctlBin = path.join(prefix, 'bin', 'axctl');
  app = await started;
}, 60_000);

afterAll(async () => {
  await app?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('the packed axctl (scripts/pack-axctl.mjs, npm install -g)', () => {
  it(`is axctl-${VERSION}.tgz: one bundled file and a manifest without dependencies`, () => {
    expect(path.basename(tarball)).toBe(`axctl-${VERSION}.tgz`);
    const files = untar(tarball);
    expect([...files.keys()].sort()).toEqual(['package/dist/axctl.js', 'package/package.json']);
    const manifest = JSON.parse(files.get('package/package.json')?.toString('utf8') ?? '{}') as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: 'axctl', version: VERSION, type: 'module', bin: { axctl: 'dist/axctl.js' } });
    expect(manifest).not.toHaveProperty('dependencies');
    const bundle = files.get('package/dist/axctl.js')?.toString('utf8') ?? '';
    expect(bundle.startsWith('#!/usr/bin/env node\n')).toBe(true);
    // Only Node's built-in modules stay outside the bundle.
    const imports = [...bundle.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.every((i) => i?.startsWith('node:'))).toBe(true);
    expect(bundle).not.toMatch(/\bimport\(\s*["'`](?!node:)|\brequire\(/);
  });

  it('installs as <prefix>/bin/axctl with nothing but itself', () => {
    expect(readdirSync(path.join(dir, 'prefix', 'lib', 'node_modules'))).toEqual(['axctl']);
    expect(readdirSync(path.join(dir, 'prefix', 'lib', 'node_modules', 'axctl')).sort()).toEqual(['dist', 'package.json']);
  });

  it('axctl --help', async () => {
    const r = await runProcess(axctlBin, ['--help']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('usage: axctl <command> [options]');
    expect(r.stdout).toContain('tasks list');
    expect(r.stdout).toContain('logs');
    expect(r.stdout).toMatch(/Exit codes: 0 success, 1 failure \(API or network error[^)]*\),\s+2 usage error/);
  });

  it('an API that does not answer: exit 1, one line', async () => {
    const r = await runProcess(axctlBin, ['tasks', 'list'], { env: cleanEnv({ AX_URL: refusedUrl }) });
    expect(r).toEqual({ code: 1, stdout: '', stderr: `axctl: cannot reach ${refusedUrl}: connection refused\n` });
  });

  it('a usage error: exit 2', async () => {
    const r = await runProcess(axctlBin, ['bogus']);
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'axctl: unknown command "bogus" (see axctl --help)\n' });
  });

  it('against a real admin API: apply from stdin, list --json, a bad token', async () => {
    const env = cleanEnv({ AX_URL: app.url, AX_TOKEN: app.tokens.operator });
    const applied = await runProcess(axctlBin, ['tasks', 'apply', '-f', '-'], { env, stdin: TASK_YAML });
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^install_probe +created$/m);

    const listed = await runProcess(axctlBin, ['tasks', 'list', '--json'], { env });
    expect(listed.code).toBe(0);
    const body = JSON.parse(listed.stdout) as { items: Array<{ name: string; description?: string }> };
    expect(body.items.find((t) => t.name === 'install_probe')).toMatchObject({ description: 'created by the installed axctl' });

    const refused = await runProcess(axctlBin, ['tasks', 'list'], { env: cleanEnv({ AX_URL: app.url, AX_TOKEN: 'not-a-token' }) });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^axctl: tasks list: .* \(401 [A-Z_]+\); check AX_TOKEN or --token\n$/);
  });
});

describe('the launcher of the checkout (node scripts/axctl.mjs, the root script `pnpm axctl`)', () => {
  const launcher = path.join(ROOT, 'scripts/axctl.mjs');

  it('--help from the root (building packages/cli first when its dist is missing or older)', async () => {
    const r = await runProcess(process.execPath, [launcher, '--help'], { timeoutMs: 50_000 });
    expect(errLines(r)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('usage: axctl <command> [options]');
  }, 60_000);

  it("passes the CLI's exit code and stderr through; drops a leading --", async () => {
    const usage = await runProcess(process.execPath, [launcher, '--', 'bogus']);
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(errLines(usage)).toEqual(['axctl: unknown command "bogus" (see axctl --help)']);
    const refused = await runProcess(process.execPath, [launcher, 'tasks', 'get', 'x'], { env: cleanEnv({ AX_URL: refusedUrl }) });
    expect(refused.code).toBe(1);
    expect(errLines(refused)).toEqual([`axctl: cannot reach ${refusedUrl}: connection refused`]);
  });

  it('stdin and --json pass through; a relative file is read from where pnpm was started (INIT_CWD)', async () => {
    const env = cleanEnv({ AX_URL: app.url, AX_TOKEN: app.tokens.operator });
    const yaml = TASK_YAML.replace('install_probe', 'launcher_probe');
    const fromStdin = await runProcess(process.execPath, [launcher, 'tasks', 'apply', '-f', '-'], { env, stdin: yaml });
    expect(errLines(fromStdin)).toEqual([]);
    expect(fromStdin.stdout).toMatch(/^launcher_probe +created$/m);

    const got = await runProcess(process.execPath, [launcher, 'tasks', 'get', 'launcher_probe', '--json'], { env });
    expect(got.code).toBe(0);
    expect((JSON.parse(got.stdout) as { name: string }).name).toBe('launcher_probe');

    // As `pnpm axctl tasks apply -f tasks.yaml` run in `where`: pnpm starts the script in the root.
    const where = path.join(dir, 'where');
    mkdirSync(where);
    writeFileSync(path.join(where, 'tasks.yaml'), yaml.replace('launcher_probe', 'relative_probe'));
    const relative = await runProcess(process.execPath, [launcher, 'tasks', 'apply', '-f', 'tasks.yaml'], {
      env: { ...env, INIT_CWD: where, npm_lifecycle_event: 'axctl', npm_lifecycle_script: 'node scripts/axctl.mjs tasks apply -f tasks.yaml' },
    });
    expect(errLines(relative)).toEqual([]);
    expect(relative.stdout).toMatch(/^relative_probe +created$/m);
  });

  it('pnpm --silent axctl --help from the repository root (the root scripts axctl and pack:axctl exist)', async () => {
    expect(ROOT_SCRIPTS).toMatchObject({ axctl: 'node scripts/axctl.mjs', 'pack:axctl': 'node scripts/pack-axctl.mjs' });
    const r = await runProcess('pnpm', ['--silent', 'axctl', '--help'], { timeoutMs: 50_000 });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('usage: axctl <command> [options]');
  }, 60_000);
});
