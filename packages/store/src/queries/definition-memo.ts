/**
 * Parsed task definitions by the stored values they were parsed from (#24): every task read
 * re-validates its row through core's schema (`parseTaskDefinitionOrThrow`), 15 % of admin-api's
 * CPU listing a page of tasks on the bench's history, though a page asked again holds the same
 * rows. The key is the row's definition columns themselves, not its id and version (several
 * databases in one process have the same ids; a hand-edited row keeps its version), so a hit is
 * exactly the parse the row would have given. What is kept is deeply frozen: a caller that tried
 * to change a shared definition would throw instead of changing it for the next reader.
 */

/** Most definitions kept per process; the oldest kept goes first. */
export const DEFINITION_MEMO_MAX = 4_096;

const memo = new Map<string, unknown>();

/**
 * The key of a row's stored values, or null when one is not a plain value (a driver that returns
 * JSON columns parsed: such rows are parsed every time). Each value is written with its type and
 * length before it, so no two lists of values have one key, whatever characters a description
 * holds: a key another team could forge would hand it that team's definition.
 */
export function definitionKey(values: readonly unknown[]): string | null {
  let key = '';
  for (const v of values) {
    let text: string;
    let tag: string;
    if (v === null) {
      key += 'N;';
      continue;
    } else if (typeof v === 'string') [tag, text] = ['s', v];
    else if (typeof v === 'number' || typeof v === 'bigint') [tag, text] = ['n', String(v)];
    else if (Buffer.isBuffer(v)) [tag, text] = ['s', v.toString('utf8')];
    else return null;
    key += `${tag}${text.length}:${text}`;
  }
  return key;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** `parse()` for these stored values, from the memo when they were parsed before. */
export function memoizedDefinition<T>(values: readonly unknown[], parse: () => T): T {
  const key = definitionKey(values);
  if (key === null) return parse();
  const hit = memo.get(key);
  if (hit !== undefined) return hit as T;
  const parsed = deepFreeze(parse()); // a row that does not parse throws here and is not kept
  memo.set(key, parsed);
  if (memo.size > DEFINITION_MEMO_MAX) {
    const oldest = memo.keys().next();
    if (oldest.done !== true) memo.delete(oldest.value);
  }
  return parsed;
}
