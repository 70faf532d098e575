/**
 * What `NODE_ENV=production` refuses in a secret (pure; env-fields.ts applies it to every field
 * whose value may not be printed):
 *
 * - a placeholder: a value carrying the marker `CHANGE_ME` (any case, with `-`, `_`, `.`, a
 *   blank or nothing between the words, also percent-encoded). Every placeholder shipped in
 *   `deploy/` carries it (test/deploy/placeholder-secrets.test.ts), so a copied file with a value
 *   left unreplaced stops the service instead of running on a password published in the
 *   repository. In a URL only the credentials are checked (user name and password), so a host
 *   such as `exchange-metrics` is not mistaken for one;
 * - a weak key: shorter than the field's production minimum (`PRODUCTION_SECRET_MIN_LENGTH`
 *   for the admin token and the executor secret) or made of fewer than
 *   `PRODUCTION_SECRET_MIN_DISTINCT_CHARS` different characters (`0000…`, `abab…`).
 *
 * A problem is returned as the tail of the one-line config error; it never contains the value.
 */

/** The marker of a placeholder, as the deploy files write it. */
export const PLACEHOLDER_MARKER = 'CHANGE_ME';

/** `change me` in any case, its words joined by nothing, `-`, `_`, `.` or a blank. */
const MARKER_PATTERN = /change[-_. ]?me/i;

/**
 * Shortest admin token or executor secret accepted with `NODE_ENV=production`: 32 characters
 * (`openssl rand -base64 32` gives 44; the API's own tokens are 47). Outside production 16.
 */
export const PRODUCTION_SECRET_MIN_LENGTH = 32;

/** Fewest different characters a key with a production minimum length must have. */
export const PRODUCTION_SECRET_MIN_DISTINCT_CHARS = 8;

/** How a value is checked: `secret` as a whole, `url` by its credentials. */
export interface ProductionSecretRule {
  readonly kind: 'secret' | 'url';
  /** Shortest value accepted (and `PRODUCTION_SECRET_MIN_DISTINCT_CHARS` applies); none by default. */
  readonly minLength?: number;
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch (_malformed) {
    // Not percent-encoded after all (a lone `%`): the text as written is what is checked.
    return text;
  }
}

/** Whether `text` (as written or percent-decoded) carries the placeholder marker. */
export function hasPlaceholderMarker(text: string): boolean {
  return MARKER_PATTERN.test(text) || MARKER_PATTERN.test(percentDecoded(text));
}

const PLACEHOLDER = `a placeholder (it contains ${PLACEHOLDER_MARKER}), refused with NODE_ENV=production`;

/** Why `raw` may not be used with `NODE_ENV=production`, or `undefined` when it may. */
export function productionSecretProblem(raw: string, rule: ProductionSecretRule): string | undefined {
  if (rule.kind === 'url') return urlCredentialsProblem(raw);
  if (hasPlaceholderMarker(raw)) return PLACEHOLDER;
  if (rule.minLength === undefined) return undefined;
  if (raw.length < rule.minLength) {
    return `expected at least ${rule.minLength} characters with NODE_ENV=production (${raw.length} characters given)`;
  }
  if (new Set(raw).size < PRODUCTION_SECRET_MIN_DISTINCT_CHARS) {
    return `expected at least ${PRODUCTION_SECRET_MIN_DISTINCT_CHARS} different characters with NODE_ENV=production`;
  }
  return undefined;
}

function urlCredentialsProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch (_notUrl) {
    // Not a URL: the field's own parser reports that; the whole text is checked meanwhile.
    return hasPlaceholderMarker(raw) ? PLACEHOLDER : undefined;
  }
  if (hasPlaceholderMarker(url.password)) return `its password is ${PLACEHOLDER}`;
  if (hasPlaceholderMarker(url.username)) return `its user name is ${PLACEHOLDER}`;
  return undefined;
}
