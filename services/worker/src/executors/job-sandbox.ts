/**
 * R25 (#44): jobs never run as the worker. Every `shell` and `python` run gets
 *
 * - its team's own OS identity (`AX_JOB_UIDS`: `team=uid[:gid]`): the process is spawned with
 *   that uid and gid and no supplementary group, so the kernel keeps it out of the worker's
 *   `/proc/<pid>/environ` and memory, the outbox, the secrets folders, and out of every process
 *   and file of another team's jobs. The worker needs root or CAP_SETUID, CAP_SETGID, CAP_KILL
 *   and CAP_CHOWN for it (`identitySwitchProblem`);
 * - a working folder of its own, `<AX_JOB_DIR>/<team>-XXXXXX` (mode 0700, owned by the team's
 *   uid; HOME of the job, with TMPDIR at `tmp/` inside), removed when the run ends. AX_JOB_DIR
 *   itself is the worker's, mode 0711: a job can enter its own folder, never list the others.
 *
 * With `AX_JOB_ISOLATION=off` (development only) jobs run as the worker, as before #44, but still
 * in a folder of their own. Least privilege is the kernel's here (CONVENTIONS habit 13): uids,
 * modes and ownership, no check of our own on what a job may touch.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DispatchItem } from '@ax/core';
import type { ExecutionOutcome } from './types.js';

/** The OS identity the jobs of one team run under. */
export interface JobIdentity {
  readonly uid: number;
  readonly gid: number;
}

/** Options of `createJobSandbox`. */
export interface JobSandboxOptions {
  /** `AX_JOB_DIR`: where each run's working folder is made. Created (0711) when missing. */
  readonly root: string;
  /** Team → identity (`AX_JOB_UIDS`); undefined = `AX_JOB_ISOLATION=off`: jobs run as the worker. */
  readonly identities: ReadonlyMap<string, JobIdentity> | undefined;
}

/** The folder and identity of one run; `dispose` removes the folder (never throws). */
export interface JobWorkspace {
  /** Undefined when isolation is off. */
  readonly identity: JobIdentity | undefined;
  /** The run's working folder and HOME. */
  readonly dir: string;
  /** TMPDIR of the run, inside `dir`. */
  readonly tmp: string;
  dispose(): Promise<void>;
}

/** A team this worker has no job uid for: the run fails before anything is spawned. */
export class JobIdentityError extends Error {
  override readonly name = 'JobIdentityError';
}

/** What the shell and python executors open a run with. */
export interface JobSandbox {
  /** True when jobs run under their team's uid. */
  readonly isolated: boolean;
  /** Makes the run's folder; throws `JobIdentityError` for a team without a uid. */
  open(item: Pick<DispatchItem, 'team'>): Promise<JobWorkspace>;
}

const ownUid = (): number => process.geteuid?.() ?? process.getuid?.() ?? -1;

/**
 * A folder of the worker's with `mode`: made when missing; an existing one must be a real folder
 * (not a symlink) owned by the worker's uid — in /tmp anyone could have made it first.
 */
export async function ensureOwnFolder(folder: string, mode: number, what: string): Promise<void> {
  await mkdir(path.dirname(folder), { recursive: true });
  try {
    await mkdir(folder, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = await lstat(folder);
  if (!stat.isDirectory() || stat.uid !== ownUid()) {
    throw new Error(`${what} ${folder} is not a folder owned by the worker's uid ${ownUid()} (a symlink or someone else's): remove it or choose another`);
  }
  await chmod(folder, mode);
}

/** The first folder on the way to `folder` that other uids cannot traverse, or undefined. */
async function untraversableAncestor(folder: string): Promise<string | undefined> {
  let current = path.dirname(folder);
  for (;;) {
    const stat = await lstat(current).catch(() => undefined);
    if (stat !== undefined && stat.isDirectory() && (stat.mode & 0o001) === 0) return current;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Removes a run's folder; when the worker may not (no CAP_DAC_OVERRIDE), first as the job's uid. */
async function removeWorkspace(dir: string, identity: JobIdentity | undefined): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    return;
  } catch {
    if (identity === undefined) return;
  }
  // The job may have left folders it made unreadable: the owner opens them, then empties its folder.
  await new Promise<void>((resolve) => {
    const child = spawn('/bin/sh', ['-c', 'chmod -R u+rwX -- "$1" 2>/dev/null; find "$1" -mindepth 1 -delete 2>/dev/null; exit 0', 'ax-job-cleanup', dir], {
      uid: identity.uid,
      gid: identity.gid,
      stdio: 'ignore',
      env: { PATH: '/usr/bin:/bin' },
    });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * The sandbox of a worker: checks and makes `root` (0711, the worker's; with isolation on,
 * every folder above it must let other uids through, or the jobs could not reach their own).
 */
export async function createJobSandbox(options: JobSandboxOptions): Promise<JobSandbox> {
  const root = path.resolve(options.root);
  const identities = options.identities;
  await ensureOwnFolder(root, 0o711, 'AX_JOB_DIR');
  if (identities !== undefined) {
    const blocked = await untraversableAncestor(root);
    if (blocked !== undefined) {
      throw new Error(`AX_JOB_DIR ${root}: jobs running as their team's uid cannot reach it, ${blocked} is not searchable by other users (chmod o+x, or choose another AX_JOB_DIR)`);
    }
  }
  return {
    isolated: identities !== undefined,
    async open(item) {
      let identity: JobIdentity | undefined;
      if (identities !== undefined) {
        identity = identities.get(item.team);
        if (identity === undefined) throw new JobIdentityError(`team ${JSON.stringify(item.team)} has no job uid on this worker (AX_JOB_UIDS); the job was not started`);
      }
      const dir = await mkdtemp(path.join(root, `${item.team}-`));
      const tmp = path.join(dir, 'tmp');
      try {
        await mkdir(tmp, { mode: 0o700 });
        await chmod(dir, 0o700);
        if (identity !== undefined) {
          await chown(tmp, identity.uid, identity.gid);
          await chown(dir, identity.uid, identity.gid);
        }
      } catch (error) {
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
        throw error;
      }
      return { identity, dir, tmp, dispose: () => removeWorkspace(dir, identity) };
    },
  };
}

/** The capability bits the worker needs to run jobs as other uids (capabilities(7)). */
const NEEDED_CAPABILITIES = { CAP_CHOWN: 0, CAP_KILL: 5, CAP_SETGID: 6, CAP_SETUID: 7 } as const;

/**
 * Why this process cannot run jobs under other uids, or undefined when it can: root, or the
 * effective capabilities CAP_SETUID, CAP_SETGID (spawn as the team), CAP_KILL (stop its group at
 * a timeout or cancel) and CAP_CHOWN (hand it its folder).
 */
export function identitySwitchProblem(statusText?: string): string | undefined {
  let text = statusText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/status', 'utf8');
    } catch {
      return 'the worker cannot read /proc/self/status to check its capabilities';
    }
  }
  const match = /^CapEff:\s*([0-9a-f]+)$/im.exec(text);
  const effective = match?.[1] === undefined ? 0n : BigInt(`0x${match[1]}`);
  const missing = Object.entries(NEEDED_CAPABILITIES)
    .filter(([, bit]) => (effective & (1n << BigInt(bit))) === 0n)
    .map(([name]) => name);
  if (missing.length === 0) return undefined;
  return `the worker (uid ${ownUid()}) lacks ${missing.join(', ')}`;
}

/**
 * R25 for `AX_SECRETS_DIR`: the folder and each team folder in it become mode 0700 (owned by the
 * worker's uid, which reads the secrets and hands each job only its own team's); a job, another
 * uid, can then neither list nor enter any of them. A folder that cannot be changed (a read-only
 * mount) is returned with the reason, for the worker to log; its files must then be readable by
 * the worker's uid only (0400 or 0440 with a group no job has).
 */
export async function lockSecretsDir(secretsDir: string): Promise<{ folder: string; problem: string }[]> {
  const problems: { folder: string; problem: string }[] = [];
  const lock = async (folder: string): Promise<void> => {
    try {
      const stat = await lstat(folder);
      if (stat.isDirectory() && (stat.mode & 0o077) !== 0) await chmod(folder, 0o700);
    } catch (error) {
      problems.push({ folder, problem: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
    }
  };
  await lock(secretsDir);
  let entries: string[];
  try {
    entries = await readdir(secretsDir);
  } catch {
    return problems;
  }
  for (const entry of entries) {
    if (entry.startsWith('.')) continue; // a Kubernetes Secret volume's ..data and ..<timestamp>
    await lock(path.join(secretsDir, entry));
  }
  return problems;
}

/**
 * The run's workspace from `sandbox` (none without one), or the failed outcome to report: a team
 * without a uid here, or a folder that could not be made. Nothing has been spawned then.
 */
export async function openWorkspace(
  sandbox: JobSandbox | undefined,
  item: Pick<DispatchItem, 'team'>,
): Promise<{ ok: true; workspace: JobWorkspace | undefined } | { ok: false; outcome: ExecutionOutcome }> {
  if (sandbox === undefined) return { ok: true, workspace: undefined };
  try {
    return { ok: true, workspace: await sandbox.open(item) };
  } catch (error) {
    const message = error instanceof JobIdentityError ? error.message : `cannot prepare the job's folder: ${(error as Error).message}`;
    return { ok: false, outcome: { outcome: 'FAILED', exitCode: null, error: message } };
  }
}
