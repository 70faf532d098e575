// Starts the example: AX_EXECUTOR_SECRET=… AX_ADMIN_API_URL=http://127.0.0.1:8080 PORT=8090 node server.mjs
import { createServer } from 'node:http';
import { createApp } from './app.mjs';

const secret = process.env.AX_EXECUTOR_SECRET;
if (!secret) {
  process.stderr.write('business-service: AX_EXECUTOR_SECRET is required\n');
  process.exit(2);
}
const app = createApp({
  secret,
  adminApiUrl: process.env.AX_ADMIN_API_URL ?? 'http://127.0.0.1:8080',
  log: (line) => process.stdout.write(`${line}\n`),
});
const port = Number(process.env.PORT ?? 8090);
const server = createServer(app).listen(port, () => process.stdout.write(`business-service listening on ${port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
