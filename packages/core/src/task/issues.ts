/**
 * Turns zod issues into ax issues: one self-contained sentence per problem that names the field
 * (`schedule.expr: …`) and the value it got, with paths written `exec.command[0]`.
 */
import type { z } from 'zod';
import type { Issue } from '../errors.js';

/** A path as zod reports it. */
export type PathSegments = ReadonlyArray<PropertyKey>;

const PLAIN_SEGMENT = /^[A-Za-z_$][\w$-]*$/;

/**
 * Formats a path: `['exec', 'command', 0]` → `exec.command[0]`; keys that are not plain words
 * are quoted, e.g. `params["a b"]`. The empty path is `''`.
 */
export function formatPath(segments: PathSegments): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      if (PLAIN_SEGMENT.test(key)) out += out === '' ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

const MAX_SHOWN_CHARS = 60;

/** Describes a received value for a message: strings quoted (shortened), objects by kind. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const shown = value.length > MAX_SHOWN_CHARS ? `${value.slice(0, MAX_SHOWN_CHARS)}…` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** Prefixes a detail sentence with its path (no prefix for the whole input). */
export function issueAt(segments: PathSegments, detail: string): Issue {
  const path = formatPath(segments);
  return { path, message: path === '' ? detail : `${path}: ${detail}` };
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  record: 'an object',
  null: 'null',
};

function listValues(values: readonly unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? JSON.stringify(v) : String(v))).join(', ');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function sizeDetail(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig, small: boolean): string {
  const bound = Number(small ? (issue as z.core.$ZodIssueTooSmall).minimum : (issue as z.core.$ZodIssueTooBig).maximum);
  const got = describeValue(issue.input);
  switch (issue.origin) {
    case 'string':
      if (small && bound <= 1) return 'must not be empty';
      return `must be at ${small ? 'least' : 'most'} ${plural(bound, 'character')} long, got ${plural(typeof issue.input === 'string' ? issue.input.length : 0, 'character')}`;
    case 'array':
    case 'set':
      if (small && bound <= 1) return 'must have at least one item';
      return `must have at ${small ? 'least' : 'most'} ${plural(bound, 'item')}`;
    default: {
      if (issue.inclusive === false) return `must be ${small ? 'greater' : 'less'} than ${bound}, got ${got}`;
      return `must be ${small ? 'at least' : 'at most'} ${bound}, got ${got}`;
    }
  }
}

/**
 * Converts one zod issue into ax issues (an `unrecognized_keys` issue becomes one per key).
 * Custom and format issues keep the message the schema wrote (which names the value itself).
 *
 * @param knownKeys keys of the object at the issue's path, used to suggest a field for a typo.
 * @param misnamed a field name from another tool that means one of ours (`retries` → `retry.max`),
 *   suggested before any typo.
 */
export function convertZodIssue(
  issue: z.core.$ZodIssue,
  knownKeys?: (path: PathSegments) => readonly string[],
  misnamed?: (path: PathSegments, key: string) => string | undefined,
): Issue[] {
  const path = issue.path as PathSegments;
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return [issueAt(path, 'is required')];
      const expected = TYPE_WORDS[issue.expected] ?? issue.expected;
      return [issueAt(path, `expected ${expected}, got ${describeValue(issue.input)}`)];
    }
    case 'too_small':
      return [issueAt(path, sizeDetail(issue, true))];
    case 'too_big':
      return [issueAt(path, sizeDetail(issue, false))];
    case 'invalid_value':
      return [issueAt(path, `must be one of ${listValues(issue.values)}, got ${describeValue(issue.input)}`)];
    case 'unrecognized_keys':
      return issue.keys.map((key) => {
        const suggestion = misnamed?.(path, key) ?? closestKey(key, knownKeys?.(path) ?? []);
        return issueAt([...path, key], `unknown field${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`);
      });
    case 'invalid_union': {
      const discriminated = issue as z.core.$ZodIssueInvalidUnion & { discriminator?: string; options?: unknown[] };
      if (discriminated.discriminator !== undefined && discriminated.options !== undefined) {
        const input = issue.input;
        const got =
          input !== null && typeof input === 'object' && !Array.isArray(input)
            ? (input as Record<string, unknown>)[discriminated.discriminator]
            : input;
        const where = path[path.length - 1] === discriminated.discriminator ? path : [...path, discriminated.discriminator];
        return [issueAt(where, `must be one of ${listValues(discriminated.options)}, got ${describeValue(got)}`)];
      }
      return [issueAt(path, issue.message)];
    }
    case 'invalid_key':
      // A record key that failed its own schema: the inner messages describe the key.
      return issue.issues.map((inner) => issueAt(path, inner.message));
    default:
      return [issueAt(path, issue.message)];
  }
}

/** The known key closest to a typo (edit distance ≤ 2, or ≤ 1/3 of the length), if any. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  const limit = Math.max(2, Math.floor(key.length / 3));
  return bestDistance <= limit ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
