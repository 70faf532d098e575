/**
 * deploy/docker-compose.yml (with overlays) resolved by `docker-compose config`, without a Docker
 * engine: with the placeholders of deploy/.env.example and the credential files that
 * deploy/write-credentials.sh writes from them into a temporary AX_CREDENTIALS_DIR, so a
 * service's `<NAME>_FILE=/run/secrets/<secret>` can be followed to the file compose would mount
 * and its configuration loaded as the container would load it (#44).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { axConfigFields } from '@ax/kit';
import { arr, deployDir, obj, parseYamlDocuments } from './support.js';

const run = promisify(execFile);
export const COMPOSE = 'docker-compose';
/** Where compose mounts a service's secrets. */
const SECRETS_MOUNT = '/run/secrets/';

/** Runs `docker-compose <args>` in deploy/, never reading a developer's own deploy/.env. */
export async function compose(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(COMPOSE, args, { cwd: deployDir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, timeout: 60_000 });
}

export type Service = Record<string, unknown>;

export interface ComposeModel {
  readonly services: Record<string, Service>;
  readonly volumes: Record<string, unknown>;
  /** Top-level secrets: name → the host file compose mounts. */
  readonly secrets: Record<string, string>;
  /** A service's `environment:` as resolved. */
  env(name: string): Record<string, string>;
  /**
   * The secret file a service's `<NAME>_FILE` points at, or a problem: not under /run/secrets/,
   * not a secret the service lists, or one no top-level `secrets:` entry declares.
   */
  secretFile(name: string, variable: string): { file: string } | { problem: string };
  /** A service's environment as its container sees it: every `<NAME>_FILE` pointing at the host file of its secret. */
  hostEnv(name: string): Record<string, string>;
  /** Removes the temporary credentials. */
  cleanup(): Promise<void>;
}

/** Resolves the base compose file plus `overlays` (file names in deploy/), with `extraEnv` lines appended to .env.example. */
export async function resolveCompose(overlays: readonly string[] = [], extraEnv = ''): Promise<ComposeModel> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ax-compose-'));
  try {
    const credentials = path.join(dir, 'credentials');
    const envFile = path.join(dir, 'compose.env');
    await writeFile(envFile, `${await readFile(path.join(deployDir, '.env.example'), 'utf8')}\nAX_CREDENTIALS_DIR=${credentials}\n${extraEnv}\n`);
    await run(path.join(deployDir, 'write-credentials.sh'), [envFile], { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 });
    const files = ['docker-compose.yml', ...overlays].flatMap((f) => ['-f', path.join(deployDir, f)]);
    const { stdout } = await compose(['--env-file', envFile, ...files, 'config']);
    const model = obj(parseYamlDocuments(stdout, 'docker-compose config')[0], 'config');
    const services = Object.fromEntries(Object.entries(obj(model.services, 'services')).map(([k, v]) => [k, obj(v, k)]));
    const secrets = Object.fromEntries(Object.entries(obj(model.secrets ?? {}, 'secrets')).map(([k, v]) => [k, String(obj(v, `secret ${k}`).file)]));
    const env = (name: string): Record<string, string> => obj(services[name]?.environment ?? {}, `${name}.environment`) as Record<string, string>;
    const secretFile = (name: string, variable: string): { file: string } | { problem: string } => {
      const target = env(name)[variable] ?? '';
      if (!target.startsWith(SECRETS_MOUNT)) return { problem: `${name} ${variable}=${target} is not under ${SECRETS_MOUNT}` };
      const listed = arr(services[name]?.secrets ?? [], `${name}.secrets`).map((s) => (typeof s === 'string' ? { source: s } : obj(s, `${name} secret`)));
      const entry = listed.find((s) => String(s.target ?? s.source) === target.slice(SECRETS_MOUNT.length));
      if (entry === undefined) return { problem: `${name} ${variable}=${target}: the service lists no such secret` };
      const file = secrets[String(entry.source)];
      return file === undefined ? { problem: `${name} ${variable}: secret ${String(entry.source)} is not declared` } : { file };
    };
    const hostEnv = (name: string): Record<string, string> =>
      Object.fromEntries(
        Object.entries(env(name)).map(([k, v]) => {
          const found = k.endsWith('_FILE') && v.startsWith(SECRETS_MOUNT) ? secretFile(name, k) : undefined;
          return [k, found !== undefined && 'file' in found ? found.file : v];
        }),
      );
    return { services, volumes: obj(model.volumes ?? {}, 'volumes'), secrets, env, secretFile, hostEnv, cleanup: () => rm(dir, { recursive: true, force: true }) };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Variables whose value the kit treats as a credential (a secret, or a URL that may carry a login). */
export const CREDENTIAL_VARIABLES: readonly string[] = Object.values(axConfigFields)
  .filter((f) => f.sensitivity !== 'public')
  .map((f) => f.env);

/**
 * What of a service's environment is a credential: a URL with a login (user info) anywhere, a
 * credential variable of the kit set to anything but login-free URLs (an enrolled worker's server
 * addresses), or any `*SECRET`, `*TOKEN`, `*PASSWORD`/`*PASS`, `*KEY` or `*COOKIE` variable with a value.
 */
export function credentialsIn(environment: Record<string, string>): string[] {
  const loginFree = (value: string): boolean =>
    value.split(',').every((part) => {
      try {
        const url = new URL(part.trim());
        return url.username === '' && url.password === '';
      } catch (_notUrl) {
        return false;
      }
    });
  return Object.entries(environment)
    .filter(([k, v]) => {
      if (v === '' || v === undefined) return false;
      if (/\b[a-z][a-z0-9+.-]*:\/\/[^\s/@]*@/i.test(v)) return true;
      if (CREDENTIAL_VARIABLES.includes(k)) return !loginFree(v);
      return /(SECRET|TOKEN|PASSWORD|PASS|KEY|COOKIE|AUTH)$/.test(k);
    })
    .map(([k]) => k);
}
