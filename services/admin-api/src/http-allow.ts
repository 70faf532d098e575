/**
 * A team's `httpAllow` (ADMIN-API.md "Teams", #44): `AX_HTTP_EXECUTOR_ALLOW` entries naming the
 * hosts the team's `http` tasks may call, within the global list the workers enforce. Each
 * entry is checked with the parser the worker enforces it with (core's host-allow.ts); `null`
 * = the team does not narrow the global list. The worker learns the list from the dispatch
 * item (the broker copies it from the team row), never from the task.
 *
 * At save a task whose `exec.url` the team's list does not admit is refused (400 at
 * `exec.url`): it could never run. Only the host and port are checked here; the addresses a
 * name resolves to are checked by the worker at each connection.
 */
import { z } from 'zod';
import { allowEntryProblem, hostAllowList, type Issue, type TaskDefinition } from '@ax/core';

/** Entries of one team list at most. */
export const HTTP_ALLOW_MAX_ENTRIES = 100;

/** The `httpAllow` field of a team write: entries, or null for none. */
export const httpAllowSchema = z
  .array(
    z
      .string()
      .min(1)
      .max(300)
      .superRefine((entry, ctx) => {
        const problem = allowEntryProblem(entry);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry)} is not an AX_HTTP_EXECUTOR_ALLOW entry: ${problem}`, input: entry });
      }),
  )
  .min(1, { error: 'give at least one entry, or null for the global list' })
  .max(HTTP_ALLOW_MAX_ENTRIES)
  .nullable()
  .describe('AX_HTTP_EXECUTOR_ALLOW entries (`host`, `host:port`, `*.domain`, `internal:host`, `a.b.c.d/n`, …) the team\'s `http` tasks may call, within the global list; null = the global list');

/**
 * The issue of an `http` task whose URL its team's `httpAllow` does not admit, or undefined.
 * @param where put in front of the message (`document 2: `).
 */
export function httpAllowIssue(def: TaskDefinition, httpAllow: readonly string[] | null, where = ''): Issue | undefined {
  if (def.exec.type !== 'http' || httpAllow === null) return undefined;
  let url: URL;
  try {
    url = new URL(def.exec.url);
  } catch {
    return undefined; // the schema refused it already
  }
  if (hostAllowList(httpAllow).allowsHost(url)) return undefined;
  return { path: 'exec.url', message: `${where}exec.url: host ${url.host} is not in the httpAllow of team ${JSON.stringify(def.team)}` };
}
