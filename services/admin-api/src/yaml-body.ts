/**
 * The body of `POST /api/v1/tasks/import`, read without holding the event loop (#45, DESIGN §11
 * "Noisy neighbours"): core's YAML reader (`taskYamlSteps`) pauses after each document, and the
 * request gives the loop back every {@link DOCUMENTS_PER_SLICE} documents, so a large import of
 * one team delays another team's reads by one slice (a few ms), not by the whole file. The limits
 * of what is read are core's (yaml-import.ts): an input over the byte or document limit is
 * answered 413 `PAYLOAD_TOO_LARGE` naming the limit; too deep a document, or any other problem,
 * 400 `VALIDATION_FAILED` with at most `MAX_TASK_YAML_ISSUES` issues.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { taskYamlSteps, type TaskDefinition } from '@ax/core';
import { ApiError } from './errors.js';
import type { Parsed } from './route.js';

/** Documents read between two turns of the event loop (each costs ~0.1–0.5 ms). */
export const DOCUMENTS_PER_SLICE = 20;

/** The import's definitions, or its issues (each naming its document and line); throws 413 when the input is too large. */
export async function parseImportYaml(text: string): Promise<Parsed<TaskDefinition[]>> {
  const steps = taskYamlSteps(text);
  let step = steps.next();
  for (let read = 1; step.done !== true; read++, step = steps.next()) {
    if (read % DOCUMENTS_PER_SLICE === 0) await nextTurn();
  }
  const result = step.value;
  if (result.ok) return result;
  if (result.tooLarge !== undefined) {
    const { limit, max } = result.tooLarge;
    throw new ApiError(413, 'PAYLOAD_TOO_LARGE', result.issues[0]?.message ?? `the import is over its ${limit} limit`, { limit, max });
  }
  return {
    ok: false,
    issues: result.issues.map((i) => ({
      path: i.path,
      // core's message already names the document ("document 2: priority: …"); add the line.
      message: i.line === undefined ? i.message : `${i.message} (line ${i.line})`,
      ...(i.document === undefined ? {} : { document: i.document }),
      ...(i.line === undefined ? {} : { line: i.line }),
    })),
  };
}
