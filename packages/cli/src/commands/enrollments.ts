/**
 * `axctl workers enroll|enrollments|revoke`: worker enrollments (ADMIN-API.md "Workers",
 * docs/teams.md "Worker enrollments"). The credential of a new enrollment is in the API's answer
 * once: `--credential-file` writes it to a new file of mode 0600 (and prints only the id), so it
 * need never be on a terminal or in a shell history; without it, it is printed once.
 */
import { constants, existsSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { CreatedWorkerEnrollment, WorkerEnrollment, WorkerEnrollmentPage } from '@ax/api-types';
import { integer, listOption, positionals, requiredOption, stringOption, UsageError } from '../args.js';
import { CommandFailed, printJson, printMore, type CommandSpec } from '../command.js';
import { formatTable } from '../table.js';
import { teamsOf } from './teams.js';

/** `enr-` + 12 of [a-z0-9]. */
const ENROLLMENT_ID = /^enr-[a-z0-9]{12}$/;

/** Writes `text` to a new file of mode 0600 (never an existing one). */
async function writeSecretFile(file: string, text: string): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.chmod(0o600); // whatever the umask
    await handle.writeFile(`${text}\n`, 'utf8');
  } finally {
    await handle.close();
  }
}

const enroll: CommandSpec = {
  name: 'workers enroll',
  synopsis: '--name N --team T [--team T2 …] [--tag X …] [--credential-file PATH]',
  summary: 'Enroll workers for teams; needs an admin token of every team named ("*": of every team).',
  options: {
    name: { type: 'string', value: 'N', help: 'the enrollment name (a-z 0-9 _ . -, at most 64; unique among live ones)' },
    team: { type: 'string', value: 'T', multiple: true, help: 'a team its workers serve, or "*" for every team (default: AX_TEAM)' },
    tag: { type: 'string', value: 'X', multiple: true, help: 'a tag its workers may offer (default: any)' },
    'credential-file': { type: 'string', value: 'PATH', help: 'write the credential to this new file, mode 0600, and print only the id' },
  },
  notes: [
    'The credential is shown once. The worker reads it from AX_WORKER_CREDENTIAL_FILE; give it that file',
    '(a Kubernetes or Docker secret). Revoke with `axctl workers revoke <id>`.',
  ],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const name = requiredOption(args, 'name', ctx.command);
    const teams = teamsOf(ctx, listOption(args, 'team'));
    const tags = listOption(args, 'tag');
    const file = stringOption(args, 'credential-file');
    if (file !== undefined) {
      if (file === '') throw new UsageError(`${ctx.command}: --credential-file: expects a path`);
      if (existsSync(file)) throw new UsageError(`${ctx.command}: --credential-file: ${file} exists; it is never overwritten (remove it, or name a new file)`);
      if (!existsSync(path.dirname(path.resolve(file)))) throw new UsageError(`${ctx.command}: --credential-file: the folder of ${file} does not exist`);
    }
    const { body } = await ctx.client.post<CreatedWorkerEnrollment>('/api/v1/workers/enrollments', { json: { name, teams, ...(tags.length > 0 ? { tags } : {}) } });
    if (file === undefined) {
      if (ctx.json) return printJson(ctx, body);
      ctx.io.out(`enrollment ${body.id} (${body.name}) for ${body.teams.join(', ')}${body.tags.length > 0 ? `, tags ${body.tags.join(', ')}` : ''}`);
      ctx.io.out(`credential (shown once; store it now): ${body.credential}`);
      return;
    }
    try {
      await writeSecretFile(file, body.credential);
    } catch (err) {
      // The credential would be lost: revoke the enrollment so nothing is left half-done.
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      await unlink(file).catch(() => undefined);
      try {
        await ctx.client.request('DELETE', `/api/v1/workers/enrollments/${encodeURIComponent(body.id)}`);
      } catch {
        throw new CommandFailed(`could not write the credential to ${file} (${reason}), nor revoke enrollment ${body.id}: revoke it with \`axctl workers revoke ${body.id}\``);
      }
      throw new CommandFailed(`could not write the credential to ${file} (${reason}); enrollment ${body.id} was revoked again, nothing is left`);
    }
    if (ctx.json) {
      const { credential: _credential, ...shown } = body;
      return printJson(ctx, { ...shown, credentialFile: path.resolve(file) });
    }
    ctx.io.out(body.id);
  },
};

const list: CommandSpec = {
  name: 'workers enrollments',
  synopsis: '[--state live|revoked|all] [--limit N] [--cursor C]',
  summary: "List worker enrollments whose teams are all the token's (never their credentials).",
  options: {
    state: { type: 'string', value: 'live|revoked|all', help: 'which ones (default live)' },
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const state = stringOption(args, 'state');
    if (state !== undefined && !['live', 'revoked', 'all'].includes(state)) throw new UsageError(`--state: expected live, revoked or all, got ${JSON.stringify(state)}`);
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<WorkerEnrollmentPage>('/api/v1/workers/enrollments', {
      state,
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<WorkerEnrollment>(
      [
        { header: 'id', value: (e) => e.id },
        { header: 'name', value: (e) => e.name },
        { header: 'teams', value: (e) => e.teams },
        { header: 'tags', value: (e) => e.tags },
        { header: 'workers', value: (e) => e.workers.length, align: 'right' },
        { header: 'created', value: (e) => e.createdAt },
        { header: 'by', value: (e) => e.createdBy },
        { header: 'revoked', value: (e) => e.revokedAt },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

const revoke: CommandSpec = {
  name: 'workers revoke',
  synopsis: '<id>',
  summary: 'Revoke a worker enrollment at once: its credential, RabbitMQ and Redis users, and registry entries.',
  options: {},
  notes: ['Its running executions are recovered by the brokers as from a lost worker. Revoking a revoked one again is harmless.'],
  run: async (ctx, args) => {
    const [id] = positionals(args, ['id'], ctx.command) as [string];
    if (!ENROLLMENT_ID.test(id)) throw new UsageError(`${ctx.command}: <id>: expected an enrollment id (enr- and 12 of a-z 0-9), got ${JSON.stringify(id)}`);
    await ctx.client.request('DELETE', `/api/v1/workers/enrollments/${encodeURIComponent(id)}`);
    if (ctx.json) return printJson(ctx, { id, revoked: true });
    ctx.io.out(`enrollment ${id} revoked: its credential, RabbitMQ and Redis users no longer work, and its workers are gone from the registry`);
  },
};

export const enrollmentCommands: readonly CommandSpec[] = [enroll, list, revoke];
