/**
 * The trigrams of task search (migration 0009, queries/task-text.ts): every distinct run of 3
 * characters (code points, as SQL's SUBSTRING counts them) of a text, as written. No case
 * folding here: the column's collation (utf8mb4_unicode_ci) compares them as LIKE compares
 * characters, so JavaScript's and SQL's lower-casing never have to agree. The migration fills
 * the table from existing tasks in SQL by this same rule.
 */

/** How many characters a trigram holds. */
export const TRIGRAM_CHARS = 3;

/** The distinct trigrams of `text` in order of first appearance (none when shorter than 3). */
export function textTrigrams(text: string): string[] {
  const chars = Array.from(text);
  const seen = new Set<string>();
  for (let i = 0; i + TRIGRAM_CHARS <= chars.length; i += 1) seen.add(chars.slice(i, i + TRIGRAM_CHARS).join(''));
  return [...seen];
}

/**
 * At most `max` of `trigrams`, spread evenly over the list (first and last included): the ones
 * a search probes for their frequency. A long term has many overlapping trigrams; a few spread
 * over it find a rare one as well as all would.
 */
export function spreadTrigrams(trigrams: readonly string[], max: number): string[] {
  if (trigrams.length <= max) return [...trigrams];
  const picked: string[] = [];
  for (let k = 0; k < max; k += 1) picked.push(trigrams[Math.round((k * (trigrams.length - 1)) / (max - 1))] as string);
  return [...new Set(picked)];
}
