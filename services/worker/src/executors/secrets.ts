/**
 * `{"secretRef":"NAME"}` values (ADMIN-API.md "Secrets"), resolved from the task's team folder
 * `<AX_SECRETS_DIR>/<team>/<NAME>` and from nothing else — never from the worker's environment
 * (issue #18.2: a secretRef to `AX_EXECUTOR_SECRET` or `AX_REDIS_URL` used to return it).
 *
 * Checks, in order: the name (`^[A-Za-z0-9_.-]{1,128}$`, not `.` or `..`, so never a path), the
 * team, `AX_SECRETS_DIR` set, then the file's real path (symlinks resolved) must lie inside the
 * real path of `<dir>/<team>/` — a Kubernetes Secret volume (files are symlinks to `..data/…`
 * inside the folder) passes, a link out of the folder does not. The file is opened without
 * following a final symlink, must be a regular file of at most `SECRET_FILE_LIMIT_BYTES`, and
 * loses one trailing newline (`\n` or `\r\n`). A value of 1 to 3 characters is refused: it is
 * too short to be masked in output (secret-mask.ts). Every refusal is a `SecretMissingError`
 * (`SECRET_MISSING: …`) naming the secret and the team, never a value or a filesystem path.
 */
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import path from 'node:path';
import { SECRET_NAME_PATTERN, TEAM_NAME_PATTERN, type SecretableValue } from '@ax/core';
import { MIN_MASKED_LENGTH } from './secret-mask.js';

// What a secret name may be (one file name, no separator, never . or ..): @ax/core's
// SECRET_NAME_PATTERN, the same the task schema checks at save time; checked again here.
export { SECRET_NAME_PATTERN };
/** Bytes a secret file may hold at most. */
export const SECRET_FILE_LIMIT_BYTES = 65_536;

/** Where secretRefs are read. */
export interface SecretSource {
  /** `AX_SECRETS_DIR`; undefined = every secretRef fails. */
  readonly dir: string | undefined;
  /** The task's team (the dispatch item's `team`). */
  readonly team: string;
}

/** A secretRef that cannot be resolved (missing or refused): the attempt fails, naming it. */
export class SecretMissingError extends Error {
  override readonly name = 'SecretMissingError';
  readonly code = 'SECRET_MISSING';
  /**
   * @param variable the secret's name as the task wrote it (kept under its old field name)
   * @param why what is wrong, without a value or a path
   */
  constructor(
    readonly variable: string,
    why: string,
  ) {
    super(`SECRET_MISSING: secret ${JSON.stringify(variable.slice(0, 160))} ${why}`);
  }
}

/** Why a name is not a secret name, or undefined. */
export function secretNameProblem(name: string): string | undefined {
  if (!SECRET_NAME_PATTERN.test(name) || name === '.' || name === '..') {
    return 'is not a valid secret name (^[A-Za-z0-9_.-]{1,128}$, not "." or "..")';
  }
  return undefined;
}

/** True when some value is a secretRef (only then is the filesystem touched). */
export function hasSecretRef(values: Readonly<Record<string, SecretableValue>> | undefined): boolean {
  return values !== undefined && Object.values(values).some((value) => typeof value !== 'string');
}

function isInside(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  // `..data/…` (a Kubernetes Secret volume's own folder) is inside; `..` and `../…` are not.
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The value of one secret of `source.team`; throws `SecretMissingError`. */
export async function readSecret(name: string, source: SecretSource): Promise<string> {
  const problem = secretNameProblem(name);
  if (problem !== undefined) throw new SecretMissingError(name, problem);
  const { dir, team } = source;
  if (!TEAM_NAME_PATTERN.test(team)) throw new SecretMissingError(name, 'cannot be read: the task has no valid team');
  if (dir === undefined) throw new SecretMissingError(name, `of team ${JSON.stringify(team)} cannot be read: AX_SECRETS_DIR is not set on this worker`);
  const notFound = new SecretMissingError(name, `is not in the secrets folder of team ${JSON.stringify(team)}`);
  let folder: string;
  let file: string;
  try {
    folder = await realpath(path.join(dir, team));
    file = await realpath(path.join(folder, name));
  } catch (error) {
    if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') throw notFound;
    throw new SecretMissingError(name, `of team ${JSON.stringify(team)} cannot be read (${errnoOf(error) ?? 'error'})`);
  }
  if (!isInside(file, folder)) throw new SecretMissingError(name, `of team ${JSON.stringify(team)} is refused: it leads outside the team's folder`);
  let handle;
  try {
    // O_NOFOLLOW: the checked path itself must not have become a symlink since realpath;
    // O_NONBLOCK: a FIFO put there does not hang the open (it is refused below).
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') throw notFound;
    throw new SecretMissingError(name, `of team ${JSON.stringify(team)} cannot be read (${errnoOf(error) ?? 'error'})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new SecretMissingError(name, `of team ${JSON.stringify(team)} is refused: it is not a regular file`);
    if (stat.size > SECRET_FILE_LIMIT_BYTES) throw new SecretMissingError(name, `of team ${JSON.stringify(team)} is refused: it is larger than ${SECRET_FILE_LIMIT_BYTES} bytes`);
    const buffer = Buffer.alloc(SECRET_FILE_LIMIT_BYTES + 1);
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, size, buffer.length - size, size);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > SECRET_FILE_LIMIT_BYTES) throw new SecretMissingError(name, `of team ${JSON.stringify(team)} is refused: it is larger than ${SECRET_FILE_LIMIT_BYTES} bytes`);
    }
    const text = buffer.subarray(0, size).toString('utf8');
    const value = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
    if (value.length > 0 && value.length < MIN_MASKED_LENGTH) {
      throw new SecretMissingError(name, `of team ${JSON.stringify(team)} is refused: a value of 1 to ${MIN_MASKED_LENGTH - 1} characters is too short to be masked in output`);
    }
    return value;
  } catch (error) {
    if (error instanceof SecretMissingError) throw error;
    throw new SecretMissingError(name, `of team ${JSON.stringify(team)} cannot be read (${errnoOf(error) ?? 'error'})`);
  } finally {
    await handle.close();
  }
}

/** Resolved values and the secret values among them (to mask). */
export interface ResolvedValues {
  readonly values: Record<string, string>;
  /** The values read from secret files, for the output mask. */
  readonly secrets: readonly string[];
}

/**
 * Literal values as they are, secretRefs read from `source` (each name once). Call only when
 * `hasSecretRef(values)`; throws the first `SecretMissingError` by key order.
 */
export async function resolveSecretables(values: Readonly<Record<string, SecretableValue>>, source: SecretSource): Promise<ResolvedValues> {
  const names = [...new Set(Object.values(values).flatMap((value) => (typeof value === 'string' ? [] : [value.secretRef])))];
  const settled = await Promise.allSettled(names.map((name) => readSecret(name, source)));
  const byName = new Map(names.map((name, i) => [name, settled[i]]));
  const out: Record<string, string> = {};
  const secrets: string[] = [];
  for (const [key, value] of Object.entries(values)) {
    if (typeof value === 'string') {
      out[key] = value;
      continue;
    }
    const read = byName.get(value.secretRef);
    if (read?.status !== 'fulfilled') throw read?.reason instanceof Error ? read.reason : new SecretMissingError(value.secretRef, 'cannot be read');
    out[key] = read.value;
    secrets.push(read.value);
  }
  return { values: out, secrets: [...new Set(secrets)] };
}
