/**
 * `pnpm bench --baseline <commit>`: an older commit's code measured by this tree's scenario
 * scripts in the same minutes (the machine's speed moves absolute figures by ×2 from hour to
 * hour; a ratio taken in one run does not move). The commit is exported with `git archive`
 * into a folder of the system temp dir, installed from the pnpm store and built once; later
 * runs reuse it. A round runs against it when `AX_BENCH_TREE` names that folder (ax-stack.mjs):
 * its services and its migrations.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BUILT_MARK = '.ax-bench-built';

/** The full commit id of `rev` in `repo` (throws a one-line error when it names none). */
export function resolveCommit(repo, rev) {
  const out = spawnSync('git', ['-C', repo, 'rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`--baseline ${rev}: not a commit of ${repo}`);
  return out.stdout.trim();
}

/** Where the built tree of `commit` lives. */
export function baselineDir(commit) {
  return path.join(os.tmpdir(), `ax-bench-baseline-${commit.slice(0, 12)}`);
}

/**
 * The built tree of `rev` (exported, `pnpm install --frozen-lockfile`, `pnpm build`), made on
 * first use; `log` gets a line per step. Returns `{ commit, dir }`.
 */
export function prepareBaseline(repo, rev, log) {
  const commit = resolveCommit(repo, rev);
  const dir = baselineDir(commit);
  if (existsSync(path.join(dir, BUILT_MARK))) {
    log(`baseline ${commit.slice(0, 12)}: reusing ${dir}`);
    return { commit, dir };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  log(`baseline ${commit.slice(0, 12)}: exporting into ${dir}`);
  const archive = execFileSync('git', ['-C', repo, 'archive', '--format=tar', commit], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-xf', '-', '-C', dir], { input: archive });
  const run = (what, args) => {
    log(`baseline ${commit.slice(0, 12)}: ${what}`);
    const r = spawnSync('pnpm', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env: { ...process.env, CI: 'true' } });
    if (r.status !== 0) throw new Error(`baseline ${commit.slice(0, 12)}: \`pnpm ${args.join(' ')}\` failed: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' / ')}`);
  };
  run('pnpm install --frozen-lockfile', ['install', '--frozen-lockfile']);
  run('pnpm build', ['build']);
  writeFileSync(path.join(dir, BUILT_MARK), `${commit}\n`);
  return { commit, dir };
}
