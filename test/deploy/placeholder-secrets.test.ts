// The placeholders shipped in deploy/ (.env.example, k8s/base/secret.yaml) must be refused by the
// production configuration check (@ax/kit, NODE_ENV=production): whoever copies a file and forgets
// a value gets a service that stops with one line naming the variable, not a stack running on a
// password published in this repository. Every secret-looking value is tried wherever it can
// land: as a token or key itself, and as the password inside each connection URL.
import { axServiceFields, ConfigError, loadConfig, type Env } from '@ax/kit';
import { describe, expect, it } from 'vitest';
import { obj, parseYamlDocuments, readRepoFile } from './support.js';

/** Every ax variable; the admin API's set is the widest (tokens, URLs, webhook). */
const fields = axServiceFields('admin-api');
/** What NODE_ENV=production requires besides secrets. */
const productionBase: Env = { NODE_ENV: 'production', AX_HTTP_EXECUTOR_ALLOW: 'orders.internal:8080' };

/** The variables the production check refuses in `env` (none: it loads). */
function refusedVariables(env: Env): string[] {
  try {
    loadConfig(fields, { ...productionBase, ...env });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map((i) => i.variable);
  }
}

/** Where a secret value of a deploy file can end up in an ax service's environment. */
const LANDINGS: ReadonlyArray<{ variable: string; env: (value: string) => string }> = [
  { variable: 'AX_ADMIN_TOKEN', env: (v) => v },
  { variable: 'AX_EXECUTOR_SECRET', env: (v) => v },
  // As docker-compose.yml composes them from the *_PASSWORD values.
  { variable: 'AX_MYSQL_URL', env: (v) => `mysql://ax:${v}@mysql:3306/ax` },
  { variable: 'AX_REDIS_URL', env: (v) => `redis://:${v}@redis:6379` },
  { variable: 'AX_AMQP_URL', env: (v) => `amqp://ax:${v}@rabbitmq:5672` },
];

/** Names of variables holding a secret. */
const SECRET_NAME = /PASSWORD|TOKEN|SECRET|_KEY$/;

/** `KEY=value` lines of deploy/.env.example with a secret-looking name and a value. */
function envExampleSecrets(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readRepoFile('deploy/.env.example').split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m === null) continue;
    const [, key = '', value = ''] = m;
    if (SECRET_NAME.test(key) && value.trim() !== '') out.set(key, value.trim());
  }
  return out;
}

/** The non-empty `stringData` of the ax-secrets Secret. */
function k8sSecrets(): Map<string, string> {
  const docs = parseYamlDocuments(readRepoFile('deploy/k8s/base/secret.yaml'), 'deploy/k8s/base/secret.yaml').map((d) => obj(d, 'secret.yaml'));
  const secret = docs.find((d) => d.kind === 'Secret');
  const data = obj(secret?.stringData, 'ax-secrets stringData');
  return new Map(Object.entries(data).map(([k, v]) => [k, String(v)] as const).filter(([, v]) => v !== ''));
}

describe('placeholders shipped in deploy/', () => {
  it('the production check accepts generated values in every landing (so the refusals below mean something)', () => {
    const generated = 'Jt5Rk2Wq9Lm4Xv7Pb1Nc6Hs3Gd8Fy0Za';
    for (const { variable, env } of LANDINGS) expect(refusedVariables({ [variable]: env(generated) }), variable).toEqual([]);
  });

  it('every secret-looking value of deploy/.env.example is refused with NODE_ENV=production, wherever it lands', () => {
    const secrets = envExampleSecrets();
    expect([...secrets.keys()]).toEqual(
      expect.arrayContaining(['MYSQL_ROOT_PASSWORD', 'AX_MYSQL_PASSWORD', 'AX_REDIS_PASSWORD', 'AX_RABBITMQ_PASSWORD', 'AX_ADMIN_TOKEN', 'AX_EXECUTOR_SECRET']),
    );
    for (const [key, value] of secrets) {
      for (const { variable, env } of LANDINGS) {
        expect(refusedVariables({ [variable]: env(value) }), `${key} as ${variable}`).toEqual([variable]);
      }
    }
  });

  it('every value of deploy/k8s/base/secret.yaml is refused with NODE_ENV=production under its own name', () => {
    const secrets = k8sSecrets();
    expect([...secrets.keys()]).toEqual(expect.arrayContaining(['AX_MYSQL_URL', 'AX_REDIS_URL', 'AX_AMQP_URL', 'AX_ADMIN_TOKEN', 'AX_EXECUTOR_SECRET']));
    const known = new Set(Object.values(fields).map((f) => f.env));
    for (const [key, value] of secrets) {
      expect(known, `${key} is a variable the production check knows`).toContain(key);
      expect(refusedVariables({ [key]: value }), key).toEqual([key]);
    }
  });

  it('every placeholder carries the marker CHANGE_ME (any case, - or _), so the next one added is refused too', () => {
    for (const [key, value] of [...envExampleSecrets(), ...k8sSecrets()]) {
      expect(value, key).toMatch(/change[-_]me/i);
    }
  });
});
