// Starts the example:
//   AX_TEAM=orders AX_EXECUTOR_KEY_VERSION=1 AX_EXECUTOR_KEY=<key> AX_ADMIN_API_URL=http://127.0.0.1:8080 PORT=8090 node server.mjs
// The key comes from `GET /api/v1/teams/orders/executor-key` (an admin of the team). During a
// rotation (POST /api/v1/teams/orders/executor-keys) set the new key and version, and the old
// key as AX_EXECUTOR_PREVIOUS_KEY until the grace ends.
//
// Demo shortcut of the all-in-one stacks (pnpm start, deploy/docker-compose.yml), which run this
// service next to ax: without AX_EXECUTOR_KEY it derives the key from AX_EXECUTOR_SECRET, as ax
// does (HMAC-SHA256(secret, "ax-executor-key\n<team>\n<version>")), and says so. A real team's
// service never holds the master secret.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createApp } from './app.mjs';

const env = { AX_TEAM: 'default', ...process.env };
// The compose stack hands the secret over as a file (AX_EXECUTOR_SECRET_FILE, a Docker secret), never a variable.
if (!env.AX_EXECUTOR_SECRET && env.AX_EXECUTOR_SECRET_FILE) env.AX_EXECUTOR_SECRET = readFileSync(env.AX_EXECUTOR_SECRET_FILE, 'utf8').replace(/\r?\n$/, '');
if (!env.AX_EXECUTOR_KEY && env.AX_EXECUTOR_SECRET) {
  env.AX_EXECUTOR_KEY = createHmac('sha256', env.AX_EXECUTOR_SECRET).update(`ax-executor-key\n${env.AX_TEAM}\n${env.AX_EXECUTOR_KEY_VERSION ?? '1'}`).digest('hex');
  process.stderr.write(`business-service: demo mode, key of team ${env.AX_TEAM} derived from AX_EXECUTOR_SECRET (a team's service gets AX_EXECUTOR_KEY instead)\n`);
}
const { AX_TEAM: team, AX_EXECUTOR_KEY: key, AX_EXECUTOR_KEY_VERSION: versionText = '1', AX_EXECUTOR_PREVIOUS_KEY: previousKey } = env;
const version = Number(versionText);
const problem = !team
  ? 'AX_TEAM is required (the team of the tasks this service runs)'
  : !key || !/^[0-9a-f]{64}$/.test(key)
    ? 'AX_EXECUTOR_KEY is required: 64 hex digits from GET /api/v1/teams/<team>/executor-key'
    : !Number.isInteger(version) || version < 1
      ? `AX_EXECUTOR_KEY_VERSION must be a positive integer, got ${JSON.stringify(versionText)}`
      : previousKey !== undefined && !/^[0-9a-f]{64}$/.test(previousKey)
        ? 'AX_EXECUTOR_PREVIOUS_KEY must be 64 hex digits'
        : undefined;
if (problem !== undefined) {
  process.stderr.write(`business-service: ${problem}\n`);
  process.exit(2);
}
const keys = { team, keys: { [version]: key, ...(previousKey && version > 1 ? { [version - 1]: previousKey } : {}) } };
const app = createApp({
  keys,
  adminApiUrl: env.AX_ADMIN_API_URL ?? 'http://127.0.0.1:8080',
  log: (line) => process.stdout.write(`${line}\n`),
});
const port = Number(env.PORT ?? 8090);
const server = createServer(app).listen(port, () => process.stdout.write(`business-service listening on ${port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
