/**
 * Size caps on untrusted JSON, checked in one walk of the parsed value before any schema runs
 * (#45, DESIGN §11 "Noisy neighbours"). The body limit (1 MiB) bounds the bytes, not the work:
 * 1 MiB holds 500,000 numbers, and zod spent ~18 s and 300,000 issues on `exec.command` holding
 * 300,000 of them. Past a cap the body is refused whole, before validation, with one issue
 * naming the cap (admin-api answers it 400 `VALIDATION_FAILED`, as any invalid body).
 *
 * The caps are at least what any schema of the API allows, so that nothing legitimate is
 * refused: the longest list a schema allows is a calendar's 10,000 dates, exactly the array
 * cap (`MAX_CALENDAR_DATES`); env, headers and params of a task hold dozens of keys; a task
 * definition is a few dozen values, nested 4 deep. The depth cap is json-guard.ts's
 * `MAX_JSON_DEPTH`, checked here too so that this walk itself is bounded (its paths are copied
 * per value).
 */
import { MAX_JSON_DEPTH } from './json-guard.js';
import { formatPath, type PathSegments } from './issues.js';

/** The caps of {@link jsonSizeExcess}. */
export interface JsonSizeLimits {
  /** Most items in one array. */
  readonly arrayLength: number;
  /** Most keys in one object. */
  readonly objectKeys: number;
  /** Most values in all (every object, array and scalar, the root included). */
  readonly nodes: number;
  /** Deepest nesting: an object or array at a path longer than this is refused. */
  readonly depth: number;
}

/**
 * The caps for API bodies: 10,000 items per array (a calendar's most dates, `MAX_CALENDAR_DATES`),
 * 1,000 keys per object (env, headers, params), 20,000 values in all (that full calendar and
 * room to spare), 32 levels (`MAX_JSON_DEPTH`). Validating a body at these caps, even an
 * all-wrong one, costs well under a second.
 */
export const JSON_BODY_LIMITS: JsonSizeLimits = { arrayLength: 10_000, objectKeys: 1_000, nodes: 20_000, depth: MAX_JSON_DEPTH };

/** Which cap was passed, where (the first place found), and a sentence naming both. */
export interface JsonSizeExcess {
  readonly limit: keyof JsonSizeLimits;
  readonly max: number;
  readonly path: PathSegments;
  /** What is wrong there, without the path: `an array of more than 10000 items (300000), the limit`. */
  readonly detail: string;
  /** The path and the detail (`the body` for the root): `exec.command: an array of …`. */
  readonly message: string;
}

/**
 * The first cap `value` passes, or undefined. One iterative walk that stops at the first excess,
 * so its cost is bounded by the caps, not by the input: arrays and objects are measured, and
 * their items counted, before the items are visited. `__proto__` keys are `structureProblems`'
 * concern; run it after this, on a value now known to be small.
 */
export function jsonSizeExcess(value: unknown, limits: JsonSizeLimits = JSON_BODY_LIMITS): JsonSizeExcess | undefined {
  const stack: Array<{ value: unknown; path: PathSegments }> = [{ value, path: [] }];
  // Counted as they are pushed, so the stack never holds more than `limits.nodes` entries.
  let nodes = 1;
  const tooMany = (): JsonSizeExcess => excess('nodes', limits.nodes, [], `more than ${limits.nodes} values in all`);
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: PathSegments };
    if (current === null || typeof current !== 'object') continue;
    if (path.length > limits.depth) return excess('depth', limits.depth, path, `nested deeper than ${limits.depth} levels`);
    if (Array.isArray(current)) {
      if (current.length > limits.arrayLength) {
        return excess('arrayLength', limits.arrayLength, path, `an array of more than ${limits.arrayLength} items (${current.length})`);
      }
      nodes += current.length;
      if (nodes > limits.nodes) return tooMany();
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(current);
    if (keys.length > limits.objectKeys) {
      return excess('objectKeys', limits.objectKeys, path, `an object of more than ${limits.objectKeys} keys (${keys.length})`);
    }
    nodes += keys.length;
    if (nodes > limits.nodes) return tooMany();
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      stack.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return undefined;
}

function excess(limit: keyof JsonSizeLimits, max: number, path: PathSegments, detail: string): JsonSizeExcess {
  const at = formatPath(path);
  return { limit, max, path, detail: `${detail}, the limit`, message: `${at === '' ? 'the body' : at}: ${detail}, the limit` };
}
