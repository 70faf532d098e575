/**
 * Masks resolved secret values in what leaves an executor — output tail, error, result data
 * (ADMIN-API.md "Secrets": resolved values are shown as `***`). Pure: no I/O.
 *
 * Rules:
 * - Every occurrence of a value is replaced by `***`; so is every line of a multi-line value
 *   (a PEM key printed line by line) and the value as written inside a JSON string (an HTTP
 *   endpoint echoing a header in its JSON body), longest first.
 * - Only values and lines of at least `MIN_MASKED_LENGTH` (4) characters are masked. Masking
 *   "a" or "on" would replace every such letter pair of the output, and the positions of the
 *   `***` would spell the value out; so secrets.ts refuses values of 1 to 3 characters
 *   (`SECRET_MISSING`) instead of resolving a value that could not be masked. An empty value
 *   shows nothing and is allowed.
 * - A tail that was cut (older output dropped) may begin with the end of a value whose start
 *   was dropped: that leading piece, of any length, is masked too.
 * - It cannot mask a value the job transforms (base64, reversed, split into pieces): masking
 *   protects readers of the output from accidents, it is not a barrier against the task's own
 *   author, who can send the value anywhere.
 */

/** What a masked value is shown as. */
export const MASK = '***';
/** Values and lines shorter than this are not masked (and secrets.ts refuses such values). */
export const MIN_MASKED_LENGTH = 4;

/** A mask for the values of one run. */
export interface SecretMask {
  /** True when there is nothing to mask (no secretRef in the run). */
  readonly empty: boolean;
  /**
   * What is looked for, longest first: the values, their lines and their JSON-escaped forms
   * (at least `MIN_MASKED_LENGTH` characters each). The log shipper masks bytes with them
   * (`logs/stream-mask.ts`).
   */
  readonly patterns: readonly string[];
  /** `text` with every occurrence of every value replaced by `***`. */
  text(text: string): string;
  /** `text()`, plus a leading piece of a value when `cut` (the tail's start was dropped). */
  tail(text: string, cut: boolean): string;
  /** A copy of a JSON-like value with every string (and key) masked. */
  deep<T>(value: T): T;
}

/** The strings to look for: values, their lines and their JSON-escaped forms, longest first. */
function patternsOf(values: Iterable<string>): string[] {
  const patterns = new Set<string>();
  const add = (candidate: string): void => {
    if (candidate.length >= MIN_MASKED_LENGTH) patterns.add(candidate);
  };
  for (const value of values) {
    add(value);
    add(JSON.stringify(value).slice(1, -1));
    if (/[\r\n]/.test(value)) for (const line of value.split(/\r?\n|\r/)) add(line);
  }
  return [...patterns].sort((a, b) => b.length - a.length);
}

/** The length of the longest proper suffix of `pattern` that `text` starts with (0: none). */
function leadingPieceLength(text: string, pattern: string): number {
  const first = text.charCodeAt(0);
  for (let i = Math.max(1, pattern.length - text.length); i < pattern.length; i++) {
    if (pattern.charCodeAt(i) === first && text.startsWith(pattern.slice(i))) return pattern.length - i;
  }
  return 0;
}

const EMPTY: SecretMask = {
  empty: true,
  patterns: [],
  text: (text) => text,
  tail: (text) => text,
  deep: (value) => value,
};

/** A mask of `values` (the secrets a run resolved). */
export function secretMask(values: Iterable<string>): SecretMask {
  const patterns = patternsOf(values);
  if (patterns.length === 0) return EMPTY;
  const text = (input: string): string => {
    let out = input;
    for (const pattern of patterns) if (out.includes(pattern)) out = out.split(pattern).join(MASK);
    return out;
  };
  const deep = <T>(value: T): T => {
    if (typeof value === 'string') return text(value) as T;
    if (Array.isArray(value)) return value.map((item: unknown) => deep(item)) as T;
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[text(key)] = deep(item);
      return out as T;
    }
    return value;
  };
  return {
    empty: false,
    patterns,
    text,
    tail(input: string, cut: boolean): string {
      const masked = text(input);
      if (!cut || masked.length === 0) return masked;
      let longest = 0;
      for (const pattern of patterns) longest = Math.max(longest, leadingPieceLength(masked, pattern));
      return longest === 0 ? masked : MASK + masked.slice(longest);
    },
    deep,
  };
}

/** The mask of a run without secrets. */
export const NO_SECRETS: SecretMask = EMPTY;

/** `outcome` with its `error` and `data` masked (the rest of an outcome holds no job text). */
export function maskOutcome<T extends { readonly error?: string; readonly data?: Record<string, unknown> }>(mask: SecretMask, outcome: T): T {
  if (mask.empty) return outcome;
  return {
    ...outcome,
    ...(outcome.error === undefined ? {} : { error: mask.text(outcome.error) }),
    ...(outcome.data === undefined ? {} : { data: mask.deep(outcome.data) }),
  };
}
