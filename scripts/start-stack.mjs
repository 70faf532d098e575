// `pnpm start`: the whole ax stack on one machine, for a first look and for development.
// Checks MySQL/Redis/RabbitMQ answer (else: which one, where, how to start it; exit 2),
// migrates, starts 1 scheduler, 1 broker, 2 workers (one tagged `etl`), the admin API on :8080
// and the example business HTTP executor on :8090, imports examples/jobs, triggers the example
// DAG once, prints the URL and the admin token, and shows every process's logs prefixed by its
// name. Ctrl-C stops everything (SIGTERM, then SIGKILL after the grace); so does the end of the
// launcher any other way (pnpm killed, terminal closed, this script SIGKILLed: scripts/lifeline.mjs).
// AX_STACK_ADMIN_PORT, AX_STACK_BUSINESS_PORT, AX_STACK_HEALTH_PORT_BASE (scheduler, broker and the
// two workers on base…base+3) and AX_STACK_DATA_DIR move it aside, e.g. for a second stack: its
// example jobs then call its own business port and keep their files under AX_STACK_DATA_DIR/files.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { prettyFactory } from 'pino-pretty';
import { enrollWorker } from '../deploy/enroll-workers.mjs';
import { startWatchdog, watchLauncher } from './lifeline.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const env = {
  AX_MYSQL_URL: 'mysql://root@127.0.0.1:3306/ax',
  AX_REDIS_URL: 'redis://127.0.0.1:6379',
  AX_AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
  AX_NAMESPACE: 'ax',
  ...process.env,
};
env.AX_ADMIN_TOKEN ||= `dev-${randomBytes(16).toString('hex')}`;
env.AX_EXECUTOR_SECRET ||= `dev-${randomBytes(16).toString('hex')}`;
const adminPort = Number(env.AX_STACK_ADMIN_PORT ?? 8080);
const adminUrl = `http://127.0.0.1:${adminPort}`;
const businessPort = Number(env.AX_STACK_BUSINESS_PORT ?? 8090);
const healthPortBase = Number(env.AX_STACK_HEALTH_PORT_BASE ?? 9101);
const dataDir = env.AX_STACK_DATA_DIR || join(root, '.ax-dev');
// The example jobs' files (the plugin's inbox and archive): /tmp/ax-dev as the job files say, or
// under AX_STACK_DATA_DIR for a stack moved aside, so two stacks never share an inbox (#47).
const filesDir = env.AX_STACK_DATA_DIR ? join(dataDir, 'files') : '/tmp/ax-dev';
/** The example job files as written (business service on :8090, files in /tmp/ax-dev) → this stack's. */
const EXAMPLE_BUSINESS_URL = 'http://127.0.0.1:8090';
const EXAMPLE_FILES_DIR = '/tmp/ax-dev';
const stopGraceMs = 15_000;
// When the launcher is gone (pnpm killed, terminal closed) nobody waits for a long drain: the
// stack must be gone within 10 s, so the services get less time before the SIGKILL.
const lostGraceMs = 6_000;

const HOW_TO_START = {
  MySQL: 'start MariaDB/MySQL (e.g. `sudo systemctl start mariadb`, or `docker compose -f deploy/docker-compose.yml up -d mysql`)',
  Redis: 'start Redis (e.g. `redis-server --daemonize yes`, or `docker compose -f deploy/docker-compose.yml up -d redis`)',
  RabbitMQ: 'start RabbitMQ (e.g. `rabbitmq-server -detached`, or `docker compose -f deploy/docker-compose.yml up -d rabbitmq`)',
  'the RabbitMQ management API': 'enable it once with `rabbitmq-plugins enable rabbitmq_management` (admin-api gives each enrolled worker its own RabbitMQ user through it)',
};

function say(line) {
  process.stdout.write(`\x1b[1m[ax]\x1b[0m ${line}\n`);
}

function fail(line) {
  process.stderr.write(`ax: ${line}\n`);
  process.exit(2);
}

/** Resolves when host:port accepts a TCP connection within `timeoutMs`, else rejects. */
function probe(url, defaultPort, timeoutMs = 2_000) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port || defaultPort) });
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 2 s')), timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.end();
      resolve();
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function redact(url) {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

async function checkServers() {
  const servers = [
    ['MySQL', env.AX_MYSQL_URL, 3306],
    ['Redis', env.AX_REDIS_URL, 6379],
    ['RabbitMQ', env.AX_AMQP_URL, 5672],
  ];
  for (const [name, url, port] of servers) {
    try {
      await probe(url, port);
    } catch (err) {
      const reason = err.code === 'ECONNREFUSED' ? 'connection refused' : err.message;
      fail(`cannot reach ${name} at ${redact(url)} (${reason}); ${HOW_TO_START[name]}, or point AX_${name === 'MySQL' ? 'MYSQL' : name === 'Redis' ? 'REDIS' : 'AMQP'}_URL at yours`);
    }
  }
  const management = env.AX_AMQP_MANAGEMENT_URL || `http://${new URL(env.AX_AMQP_URL.split(',')[0]).hostname}:15672`;
  try {
    await probe(management, 15672);
  } catch (err) {
    const reason = err.code === 'ECONNREFUSED' ? 'connection refused' : err.message;
    fail(`cannot reach the RabbitMQ management API at ${redact(management)} (${reason}); ${HOW_TO_START['the RabbitMQ management API']}, or point AX_AMQP_MANAGEMENT_URL at yours`);
  }
}

/**
 * Enrolls a dev worker (ADMIN-API.md "Workers", #44) with deploy/enroll-workers.mjs, as compose
 * does: a credential file still accepted is kept, otherwise the old enrollment of that name is
 * revoked and a new one made for every team. The worker then gets that file and the admin API's
 * URL, never the master secret or MySQL: it fetches its own RabbitMQ and Redis logins and its
 * teams' keys.
 */
async function enrollDevWorker(name, tags) {
  try {
    const { id, file, kept } = await enrollWorker({ adminUrl, token: env.AX_ADMIN_TOKEN, dir: join(dataDir, 'workers'), spec: { name, teams: ['*'], tags } });
    say(`${kept ? 'kept the enrollment of' : 'enrolled'} worker ${name} as ${id} for every team (credential in ${file})`);
    return file;
  } catch (err) {
    say(`could not enroll worker ${name}: ${err.message}`);
    return stopAll(1);
  }
}

function runOnce(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

const prettify = prettyFactory({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
const children = [];
let stopping = false;
let watchdog;

function start(name, script, extraEnv, color) {
  // Should this script be SIGKILLed, the watchdog stops what it started (scripts/lifeline.mjs).
  watchdog ??= startWatchdog({ graceMs: lostGraceMs });
  const child = spawn(process.execPath, [script], {
    cwd: root,
    // An extra value of undefined removes the setting (workers get no master secret, no MySQL).
    env: Object.fromEntries(Object.entries({ ...env, ...extraEnv }).filter(([, v]) => v !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal's Ctrl-C reaches only this script, which then stops the
    // services with one SIGTERM each (a second signal would make them exit without draining).
    detached: true,
  });
  if (child.pid !== undefined) watchdog.watch(child.pid);
  const prefix = `\x1b[${color}m${name.padEnd(13)}\x1b[0m| `;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      let text = line;
      if (line.startsWith('{')) {
        try {
          text = prettify(JSON.parse(line)).trimEnd();
        } catch {
          // not a pino line: show it as it is
        }
      }
      process.stdout.write(`${prefix}${text}\n`);
    });
  }
  child.once('exit', (code, signal) => {
    if (!stopping) {
      say(`${name} exited (${signal ?? `code ${code}`}); stopping the stack`);
      void stopAll(1);
    }
  });
  children.push({ name, child });
}

let killTimer;
let killAt = Infinity;
let stopped;

/**
 * One SIGTERM to each service, SIGKILL to those left after `graceMs`, then exit. Called again
 * while stopping (the launcher lost during a Ctrl-C drain), it only brings the SIGKILL closer.
 */
function stopAll(exitCode, graceMs = stopGraceMs) {
  if (Date.now() + graceMs < killAt) {
    killAt = Date.now() + graceMs;
    clearTimeout(killTimer);
    killTimer = setTimeout(() => {
      for (const { child } of children) child.kill('SIGKILL');
    }, graceMs);
  }
  if (stopped) return stopped;
  stopping = true;
  watchdog?.stopping();
  say('stopping…');
  const exits = children.map(
    ({ child }) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve))),
  );
  for (const { child } of children) child.kill('SIGTERM');
  stopped = Promise.all(exits).then(() => {
    clearTimeout(killTimer);
    process.exit(exitCode);
  });
  return stopped;
}

async function api(method, path, body, contentType = 'application/json') {
  const res = await fetch(`${adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.AX_ADMIN_TOKEN}`, 'content-type': contentType },
    body: body === undefined ? undefined : contentType === 'application/json' ? JSON.stringify(body) : body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function waitReady(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

async function importExamples() {
  const jobsDir = join(root, 'examples/jobs');
  for (const file of readdirSync(jobsDir).filter((f) => f.endsWith('.yaml')).sort()) {
    // A stack given other ports calls its own example service, never the one on :8090 (#47).
    const text = readFileSync(join(jobsDir, file), 'utf8').replaceAll(EXAMPLE_BUSINESS_URL, `http://127.0.0.1:${businessPort}`).replaceAll(EXAMPLE_FILES_DIR, filesDir);
    const res = await api('POST', '/api/v1/tasks/import', text, 'application/yaml');
    if (res.status !== 200) {
      say(`import of examples/jobs/${file} failed (${res.status}): ${JSON.stringify(res.body?.error ?? res.body)}`);
      continue;
    }
    const { created, updated, unchanged } = res.body;
    say(`examples/jobs/${file}: created ${created.length}, updated ${updated.length}, unchanged ${unchanged.length}`);
  }
  for (const edge of JSON.parse(readFileSync(join(jobsDir, 'dag-edges.json'), 'utf8'))) {
    const res = await api('POST', '/api/v1/edges', edge);
    if (res.status !== 201 && res.status !== 409) say(`edge ${edge.parent} → ${edge.child}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const trigger = await api('POST', '/api/v1/tasks/dag_extract/trigger', {});
  if (trigger.status === 202) say(`triggered the example DAG: instance ${trigger.body.id} of dag_extract`);
}

process.once('exit', () => {
  for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
process.once('SIGINT', () => void stopAll(0));
process.once('SIGTERM', () => void stopAll(0));
// A closed terminal. Also the short grace: nobody is left to wait for the drain.
process.once('SIGHUP', () => void stopAll(0, lostGraceMs));
// Our terminal or pipe may be gone (closed terminal, killed pnpm): losing the output must not
// crash this script before it has stopped the services.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
watchLauncher((pid) => {
  say(`the launcher (pid ${pid}) is gone; stopping the stack`);
  void stopAll(1, lostGraceMs);
});

await checkServers();
say('migrating the database');
if ((await runOnce(process.execPath, ['packages/store/dist/cli.js', 'migrate'])) !== 0) fail('migration failed (see above)');
mkdirSync(join(dataDir, 'workers'), { recursive: true });
mkdirSync(join(filesDir, 'inbox'), { recursive: true });

start('scheduler', 'services/scheduler/dist/main.js', { AX_HTTP_PORT: String(healthPortBase) }, 36);
start('broker', 'services/broker/dist/main.js', { AX_HTTP_PORT: String(healthPortBase + 1) }, 35);
start('admin-api', 'services/admin-api/dist/main.js', { AX_HTTP_PORT: String(adminPort) }, 32);
start('business-svc', 'examples/business-service/server.mjs', { PORT: String(businessPort), AX_ADMIN_API_URL: adminUrl }, 34);

if (!(await waitReady(`${adminUrl}/readyz`, 60_000))) {
  say('the admin API did not become ready within 60 s');
  await stopAll(1);
}
// Workers are enrolled (R24/R25): each gets a credential file and the admin API's URL, and none of
// the infrastructure's secrets (no AX_EXECUTOR_SECRET, no MySQL, no logins in the bus and Redis URLs).
// R25: a dev stack runs jobs as the worker (AX_JOB_ISOLATION=off, logged as a warning) unless
// AX_JOB_UIDS is given, e.g. `AX_JOB_UIDS=default=20001 sudo -E pnpm start` (docs/teams.md).
const jobIsolation = env.AX_JOB_UIDS ? {} : { AX_JOB_ISOLATION: env.AX_JOB_ISOLATION || 'off' };
const hostOnly = (url) => {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
};
const workerEnv = {
  AX_WORKER_DATA_DIR: join(dataDir, 'workers'),
  AX_PLUGIN_DIR: join(root, 'examples/plugins'),
  AX_ADMIN_URL: adminUrl,
  AX_EXECUTOR_SECRET: undefined,
  AX_ADMIN_TOKEN: undefined,
  AX_MYSQL_URL: undefined,
  AX_AMQP_URL: env.AX_AMQP_URL.split(',').map(hostOnly).join(','),
  AX_REDIS_URL: hostOnly(env.AX_REDIS_URL),
  ...jobIsolation,
};
const credential1 = await enrollDevWorker('dev-worker-1', []);
const credential2 = await enrollDevWorker('dev-worker-2', ['etl']);
start('worker-1', 'services/worker/dist/main.js', { ...workerEnv, AX_HTTP_PORT: String(healthPortBase + 2), AX_WORKER_ID: 'dev-worker-1', AX_WORKER_CREDENTIAL_FILE: credential1 }, 33);
start('worker-2/etl', 'services/worker/dist/main.js', { ...workerEnv, AX_HTTP_PORT: String(healthPortBase + 3), AX_WORKER_ID: 'dev-worker-2', AX_WORKER_TAGS: 'etl', AX_WORKER_CREDENTIAL_FILE: credential2 }, 33);
await importExamples();
say('');
say(`ax is running. API: ${adminUrl}/api/v1   OpenAPI: ${adminUrl}/api/v1/openapi.json`);
say(`console: ${adminUrl}/  (sign in with the admin token below)`);
say(`admin token: ${env.AX_ADMIN_TOKEN}`);
say(`try: curl -H "Authorization: Bearer ${env.AX_ADMIN_TOKEN}" ${adminUrl}/api/v1/instances?limit=5`);
say('Ctrl-C stops everything.');
