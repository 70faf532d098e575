/**
 * What a job answers as `data` (an HTTP endpoint's `{"success":…,"data":{…}}`, a plugin's
 * result) is checked before it enters a result item (#45, DESIGN §11 "Noisy neighbours"). The
 * item travels in a batch with other executions' results, other teams' included (R10), and is
 * stored and shown by admin-api and the console; an answer the broker, the store or a reader
 * could not take safely must be stopped here, at its one execution.
 *
 * Rules, each a clear failure reason:
 * - no key `__proto__`, `constructor` or `prototype` at any level: the keys of prototype
 *   pollution (a `__proto__` key survives `JSON.parse` as an own key and replaces an object's
 *   prototype when copied; `constructor.prototype` does the same through a deep merge). The
 *   data is not repaired (keys dropped): a quietly changed answer would be stored as if it
 *   were the business's. It is refused whole and the attempt FAILS, saying which key where, so
 *   the team sees it and its retry policy applies;
 * - nested at most `MAX_JSON_DEPTH` (32) levels, as a task's params: the broker refuses an
 *   item nested past its message bound, and deep input overflows recursive readers;
 * - at most `RESULT_DATA_MAX_BYTES` of JSON.
 *
 * An outcome that was not a success keeps its outcome; its data is dropped and its error says
 * why. An `async` (202) acceptance stays accepted: its data is dropped (the report carries the
 * real answer later).
 */
import { formatPath, MAX_JSON_DEPTH, RESULT_ERROR_MAX_LENGTH } from '@ax/core';
import type { ExecutionOutcome } from './executors/types.js';

/** Keys refused anywhere in `data`. */
export const FORBIDDEN_DATA_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Most bytes of JSON a result's `data` may hold (the http executor's default answer limit). */
export const RESULT_DATA_MAX_BYTES = 1_048_576;

/** Limits of {@link resultDataProblem}. */
export interface ResultDataLimits {
  /** Deepest nesting below `data` itself; default `MAX_JSON_DEPTH` (32). */
  readonly maxDepth?: number;
  /** Most bytes of `JSON.stringify(data)`; default `RESULT_DATA_MAX_BYTES`. */
  readonly maxBytes?: number;
}

/** Longest path quoted in a reason, in characters (a path 32 levels deep can be long). */
const PATH_SHOWN_MAX_CHARS = 200;

/**
 * Why `data` cannot be carried in a result, or `undefined` when it can. Walks iteratively and
 * stops at the depth bound, so no input can overflow the stack.
 */
export function resultDataProblem(data: Record<string, unknown>, limits: ResultDataLimits = {}): string | undefined {
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  const maxBytes = limits.maxBytes ?? RESULT_DATA_MAX_BYTES;
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value: data, path: ['data'] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: Array<string | number> };
    if (value === null || typeof value !== 'object') continue;
    if (path.length - 1 > maxDepth) return `nested deeper than ${maxDepth} levels (at ${shown(path)})`;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      if (FORBIDDEN_DATA_KEYS.has(key)) return `the key ${JSON.stringify(key)} is not allowed (at ${shown([...path, key])})`;
      stack.push({ value: (value as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(data), 'utf8');
  } catch (thrown) {
    return `not encodable as JSON: ${thrown instanceof Error ? thrown.message : String(thrown)}`;
  }
  return bytes > maxBytes ? `${bytes} bytes of JSON, over the ${maxBytes}-byte limit` : undefined;
}

function shown(path: ReadonlyArray<string | number>): string {
  const text = formatPath(path);
  return text.length <= PATH_SHOWN_MAX_CHARS ? text : `${text.slice(0, PATH_SHOWN_MAX_CHARS)}…`;
}

/**
 * `outcome` with data a result can carry: unchanged when its data passes
 * {@link resultDataProblem}; otherwise without the data, a SUCCESS turned FAILED, and the
 * error naming the problem (see the module comment).
 */
export function withCarriableData(outcome: ExecutionOutcome, limits?: ResultDataLimits): ExecutionOutcome {
  if (outcome.data === undefined) return outcome;
  const problem = resultDataProblem(outcome.data, limits);
  if (problem === undefined) return outcome;
  const { data: _refused, ...rest } = outcome;
  const why = `the answer's data was refused: ${problem}`;
  if (outcome.async === true) return rest;
  if (outcome.outcome === 'SUCCESS') return { ...rest, outcome: 'FAILED', error: why.slice(0, RESULT_ERROR_MAX_LENGTH) };
  return { ...rest, error: (outcome.error === undefined ? why : `${outcome.error}; ${why}`).slice(0, RESULT_ERROR_MAX_LENGTH) };
}
