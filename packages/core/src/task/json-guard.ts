/**
 * Structural guards run before schema validation of untrusted JSON/YAML data: no `__proto__`
 * keys (they could replace an object's prototype when copied), and a bounded nesting depth
 * (so later recursive walks cannot overflow the stack).
 */
import type { PathSegments } from './issues.js';

/** Deepest nesting of objects/arrays accepted in a task definition or message. */
export const MAX_JSON_DEPTH = 32;

/** A structural problem and where it is. */
export interface StructureProblem {
  path: PathSegments;
  detail: string;
  /** Which rule: a `__proto__` key, or nesting past the bound (a metric label, #45). */
  code: 'proto_key' | 'too_deep';
}

/**
 * Walks `value` (iteratively: deep input cannot overflow the stack) and reports every
 * `__proto__` key and the first place nested deeper than `maxDepth`.
 */
export function structureProblems(value: unknown, maxDepth: number = MAX_JSON_DEPTH): StructureProblem[] {
  const problems: StructureProblem[] = [];
  const stack: Array<{ value: unknown; path: PathSegments }> = [{ value, path: [] }];
  let reportedDepth = false;
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: PathSegments };
    if (current === null || typeof current !== 'object') continue;
    if (path.length > maxDepth) {
      if (!reportedDepth) problems.push({ path, detail: `nested deeper than ${maxDepth} levels`, code: 'too_deep' });
      reportedDepth = true;
      continue;
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      if (key === '__proto__') problems.push({ path: [...path, key], detail: 'the key "__proto__" is not allowed', code: 'proto_key' });
      else stack.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return problems;
}

/**
 * True exactly when `structureProblems(value, maxDepth)` reports nothing, without building a
 * path per node: for hot paths that need only the verdict (the reason, when there is one, comes
 * from `structureProblems`). Recursion stops at `maxDepth + 1`, so deep input cannot overflow
 * the stack.
 */
export function isStructureSound(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  return isSoundAt(value, 0, maxDepth);
}

function isSoundAt(value: unknown, depth: number, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > maxDepth) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isSoundAt(value[i], depth + 1, maxDepth)) return false;
    return true;
  }
  // Own keys as `structureProblems` walks them; JSON.parse makes "__proto__" an own key.
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key === '__proto__' || !isSoundAt((value as Record<string, unknown>)[key], depth + 1, maxDepth)) return false;
  }
  return true;
}
