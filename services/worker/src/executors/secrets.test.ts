import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasSecretRef, readSecret, resolveSecretables, SECRET_FILE_LIMIT_BYTES, SecretMissingError, type SecretSource } from './secrets.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'ax-secrets-'));
const dir = path.join(root, 'secrets');
afterAll(() => rmSync(root, { recursive: true, force: true }));

mkdirSync(path.join(dir, 'team-a'), { recursive: true });
mkdirSync(path.join(dir, 'team-b'), { recursive: true });
mkdirSync(path.join(root, 'outside'));
writeFileSync(path.join(dir, 'team-a', 'TOKEN'), 'alpha-token-1111\n');
writeFileSync(path.join(dir, 'team-b', 'TOKEN'), 'bravo-token-2222\n');
writeFileSync(path.join(dir, 'team-a', 'CRLF'), 'value-crlf\r\n');
writeFileSync(path.join(dir, 'team-a', 'TWO_NEWLINES'), 'value-two\n\n');
writeFileSync(path.join(dir, 'team-a', 'db.password-1'), 'p@ss word\twith tab');
writeFileSync(path.join(dir, 'team-a', 'EMPTY'), '');
writeFileSync(path.join(dir, 'team-a', 'SHORT'), 'abc\n');
writeFileSync(path.join(dir, 'team-a', 'BIG'), 'x'.repeat(SECRET_FILE_LIMIT_BYTES + 1));
writeFileSync(path.join(dir, 'team-a', 'LIMIT'), 'y'.repeat(SECRET_FILE_LIMIT_BYTES));
mkdirSync(path.join(dir, 'team-a', 'SUBDIR'));
writeFileSync(path.join(root, 'outside', 'X'), 'outside-value-9999');
symlinkSync(path.join(root, 'outside', 'X'), path.join(dir, 'team-a', 'LINK_OUT_ABS'));
symlinkSync('../team-b/TOKEN', path.join(dir, 'team-a', 'LINK_OTHER_TEAM'));
symlinkSync('/etc/passwd', path.join(dir, 'team-a', 'LINK_ETC'));
symlinkSync('TOKEN', path.join(dir, 'team-a', 'LINK_IN'));
execFileSync('mkfifo', [path.join(dir, 'team-a', 'FIFO')]);
// A Kubernetes Secret volume: NAME -> ..data/NAME, ..data -> ..<timestamp>/ (all inside the folder).
mkdirSync(path.join(dir, 'team-a', '..2026_12_01_00_00_00.1'));
writeFileSync(path.join(dir, 'team-a', '..2026_12_01_00_00_00.1', 'K8S_KEY'), 'from-a-kubernetes-secret');
symlinkSync('..2026_12_01_00_00_00.1', path.join(dir, 'team-a', '..data'));
symlinkSync('..data/K8S_KEY', path.join(dir, 'team-a', 'K8S_KEY'));

const a = { dir, team: 'team-a' };
const b = { dir, team: 'team-b' };

/** The error a read fails with (a test failure if it succeeds). */
async function failure(name: string, source: SecretSource = a): Promise<SecretMissingError> {
  try {
    const value = await readSecret(name, source);
    throw new Error(`read ${name} gave ${JSON.stringify(value)}`);
  } catch (error) {
    if (!(error instanceof SecretMissingError)) throw error;
    return error;
  }
}

describe('#18 secrets: resolution from <AX_SECRETS_DIR>/<team>/<NAME>', () => {
  it('#18 secrets: reads the file of the task team, one trailing newline removed', async () => {
    expect(await readSecret('TOKEN', a)).toBe('alpha-token-1111');
    expect(await readSecret('CRLF', a)).toBe('value-crlf');
    expect(await readSecret('TWO_NEWLINES', a)).toBe('value-two\n');
    expect(await readSecret('db.password-1', a)).toBe('p@ss word\twith tab');
    expect(await readSecret('EMPTY', a)).toBe('');
    expect(await readSecret('LIMIT', a)).toHaveLength(SECRET_FILE_LIMIT_BYTES);
  });

  it('#18 secrets: the same NAME gives each team its own value, never the other one', async () => {
    expect(await readSecret('TOKEN', a)).toBe('alpha-token-1111');
    expect(await readSecret('TOKEN', b)).toBe('bravo-token-2222');
    const missing = await failure('CRLF', b);
    expect(missing.message).toBe('SECRET_MISSING: secret "CRLF" is not in the secrets folder of team "team-b"');
  });

  it('#18 secrets: never reads the worker environment: AX_EXECUTOR_SECRET, any AX_*, HOME fail even when set', async () => {
    process.env.AX_TEST_SECRET_18 = 'env-value-must-not-leak';
    try {
      for (const name of ['AX_EXECUTOR_SECRET', 'AX_REDIS_URL', 'AX_AMQP_URL', 'AX_NAMESPACE', 'AX_TEST_SECRET_18', 'HOME', 'PATH']) {
        const error = await failure(name);
        expect(error.message).toBe(`SECRET_MISSING: secret "${name}" is not in the secrets folder of team "team-a"`);
        expect(error.code).toBe('SECRET_MISSING');
      }
    } finally {
      delete process.env.AX_TEST_SECRET_18;
    }
  });

  it('#18 secrets: names that are paths are refused by name, before any file is looked at', async () => {
    for (const name of ['../team-b/TOKEN', '../other-team/X', 'a/b', '..', '.', '/etc/passwd', 'team-a/../team-b/TOKEN', '', 'x'.repeat(129), 'A B', 'a\\b', 'a\0b']) {
      const error = await failure(name);
      expect(error.message).toMatch(/^SECRET_MISSING: secret ".*" is not a valid secret name/);
      expect(error.variable).toBe(name);
    }
  });

  it('#18 secrets: a symlink leading out of the team folder is refused, one inside it is followed', async () => {
    for (const name of ['LINK_OUT_ABS', 'LINK_OTHER_TEAM', 'LINK_ETC']) {
      const error = await failure(name);
      expect(error.message).toBe(`SECRET_MISSING: secret "${name}" of team "team-a" is refused: it leads outside the team's folder`);
    }
    expect(await readSecret('LINK_IN', a)).toBe('alpha-token-1111');
    expect(await readSecret('K8S_KEY', a)).toBe('from-a-kubernetes-secret');
  });

  it('#18 secrets: a directory, a FIFO, a file over 64 KiB and a value of 1 to 3 characters are refused', async () => {
    expect((await failure('SUBDIR')).message).toMatch(/is refused: it is not a regular file$/);
    expect((await failure('..data')).message).toMatch(/is refused: it is not a regular file$/);
    expect((await failure('FIFO')).message).toMatch(/is refused: it is not a regular file$/);
    expect((await failure('BIG')).message).toMatch(/is refused: it is larger than 65536 bytes$/);
    expect((await failure('SHORT')).message).toMatch(/is refused: a value of 1 to 3 characters is too short to be masked in output$/);
  });

  it('#18 secrets: without AX_SECRETS_DIR, without the team folder or with an invalid team every secretRef fails', async () => {
    expect((await failure('TOKEN', { dir: undefined, team: 'team-a' })).message).toBe('SECRET_MISSING: secret "TOKEN" of team "team-a" cannot be read: AX_SECRETS_DIR is not set on this worker');
    expect((await failure('TOKEN', { dir, team: 'team-c' })).message).toBe('SECRET_MISSING: secret "TOKEN" is not in the secrets folder of team "team-c"');
    expect((await failure('TOKEN', { dir, team: '../secrets/team-a' })).message).toBe('SECRET_MISSING: secret "TOKEN" cannot be read: the task has no valid team');
  });

  it('#18 secrets: no message carries a value or a filesystem path', async () => {
    const messages: string[] = [];
    for (const name of ['LINK_OUT_ABS', 'LINK_OTHER_TEAM', 'BIG', 'SHORT', 'FIFO', 'NOPE', '../team-b/TOKEN']) messages.push((await failure(name)).message);
    for (const message of messages) {
      expect(message).not.toContain(root);
      expect(message).not.toContain(os.tmpdir());
      expect(message).not.toMatch(/bravo-token|outside-value|abc"|root:/);
    }
  });

  it('#18 secrets: resolveSecretables keeps literals, reads each name once and fails on the first bad one', async () => {
    const resolved = await resolveSecretables({ MODE: 'full', T1: { secretRef: 'TOKEN' }, T2: { secretRef: 'TOKEN' }, K: { secretRef: 'K8S_KEY' } }, a);
    expect(resolved.values).toEqual({ MODE: 'full', T1: 'alpha-token-1111', T2: 'alpha-token-1111', K: 'from-a-kubernetes-secret' });
    expect([...resolved.secrets].sort()).toEqual(['alpha-token-1111', 'from-a-kubernetes-secret']);
    await expect(resolveSecretables({ OK: { secretRef: 'TOKEN' }, BAD: { secretRef: 'AX_EXECUTOR_SECRET' } }, a)).rejects.toThrow(/^SECRET_MISSING: secret "AX_EXECUTOR_SECRET"/);
    expect(hasSecretRef(undefined)).toBe(false);
    expect(hasSecretRef({ A: 'x', B: 'y' })).toBe(false);
    expect(hasSecretRef({ A: 'x', B: { secretRef: 'T' } })).toBe(true);
  });
});
