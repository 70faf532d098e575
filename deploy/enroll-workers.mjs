#!/usr/bin/env node
// Enrolls workers through the admin API (ADMIN-API.md "Workers", DESIGN R24/R25) and writes each
// credential to a file its worker reads (AX_WORKER_CREDENTIAL_FILE). Used by `pnpm start` and by
// the `enroll-workers` one-shot service of deploy/docker-compose.yml; no dependencies.
//
//   AX_ADMIN_URL=http://admin-api:8080 AX_ADMIN_TOKEN_FILE=/run/secrets/ax_admin_token \
//     node enroll-workers.mjs /run/ax-workers worker-1:*: worker-2:*:gpu
//
// Each argument is `<name>:<teams>:<tags>` (comma-separated lists; `*` = every team); the
// credential goes to `<dir>/<name>.credential` (mode 0600). Idempotent: a credential file that
// the admin API still accepts is kept; otherwise a live enrollment of that name is revoked and a
// new one made. Exits 2 with one line naming what failed.
import { readFileSync, writeFileSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** `name:teams:tags` → { name, teams, tags }. */
export function parseWorkerSpec(spec) {
  const [name, teams = '*', tags = ''] = spec.split(':');
  if (!/^[a-z0-9][a-z0-9_.-]{0,63}$/.test(name ?? '')) throw new Error(`worker ${JSON.stringify(spec)}: expected <name>:<teams>:<tags> with a name of a-z 0-9 _ . -`);
  const list = (text) => text.split(',').map((t) => t.trim()).filter((t) => t !== '');
  return { name, teams: list(teams), tags: list(tags) };
}

async function call(adminUrl, token, method, path, body) {
  const res = await fetch(`${adminUrl.replace(/\/$/, '')}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, body: json };
}

const why = (res) => `${res.status} ${JSON.stringify(res.body?.error?.message ?? res.body)}`;

/**
 * Makes sure worker `spec` has a live enrollment whose credential is in `<dir>/<name>.credential`;
 * returns { file, id, kept }.
 */
export async function enrollWorker({ adminUrl, token, dir, spec }) {
  const file = join(dir, `${spec.name}.credential`);
  let existing = null;
  try {
    existing = readFileSync(file, 'utf8').trim();
  } catch {
    // none yet
  }
  if (existing) {
    const self = await call(adminUrl, existing, 'GET', '/api/v1/workers/self');
    if (self.status === 200 && self.body?.enrollment?.name === spec.name) return { file, id: self.body.enrollment.id, kept: true };
  }
  const listed = await call(adminUrl, token, 'GET', '/api/v1/workers/enrollments');
  if (listed.status !== 200) throw new Error(`listing worker enrollments failed: ${why(listed)}`);
  for (const old of (listed.body?.items ?? []).filter((e) => e.name === spec.name)) {
    const revoked = await call(adminUrl, token, 'DELETE', `/api/v1/workers/enrollments/${encodeURIComponent(old.id)}`);
    if (revoked.status >= 300 && revoked.status !== 404) throw new Error(`revoking the old enrollment ${old.id} of ${spec.name} failed: ${why(revoked)}`);
  }
  const created = await call(adminUrl, token, 'POST', '/api/v1/workers/enrollments', {
    name: spec.name,
    teams: spec.teams,
    ...(spec.tags.length > 0 ? { tags: spec.tags } : {}),
  });
  if (created.status !== 201) throw new Error(`enrolling worker ${spec.name} failed: ${why(created)}`);
  mkdirSync(dir, { recursive: true });
  // written aside and renamed: a worker never reads half a credential
  writeFileSync(`${file}.tmp`, `${created.body.credential}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  return { file, id: created.body.id, kept: false };
}

async function main(argv) {
  const [dir, ...specs] = argv;
  const adminUrl = process.env.AX_ADMIN_URL;
  const tokenFile = process.env.AX_ADMIN_TOKEN_FILE;
  const token = tokenFile ? readFileSync(tokenFile, 'utf8').trim() : process.env.AX_ADMIN_TOKEN;
  if (!dir || specs.length === 0) throw new Error('usage: enroll-workers.mjs <dir> <name>:<teams>:<tags> ...');
  if (!adminUrl) throw new Error('AX_ADMIN_URL is not set: the admin API to enroll the workers with');
  if (!token) throw new Error('AX_ADMIN_TOKEN_FILE (or AX_ADMIN_TOKEN) is not set: an admin token of every team enrolls workers');
  for (const raw of specs) {
    const spec = parseWorkerSpec(raw);
    const { id, file, kept } = await enrollWorker({ adminUrl, token, dir, spec });
    process.stdout.write(`${kept ? 'kept' : 'enrolled'} worker ${spec.name} as ${id} (teams ${spec.teams.join(',')}; credential in ${file})\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`enroll-workers: ${err.message}\n`);
    process.exit(2);
  });
}
