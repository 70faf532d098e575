/**
 * Lists (ADMIN-API.md "Conventions"): `?limit=` (default 50, max 500) and `?cursor=` →
 * `{"items":[…],"nextCursor":…|null}`. Cursors are opaque base64url keysets.
 */
import { z } from 'zod';

/** Default page size. */
export const DEFAULT_LIMIT = 50;
/** Largest page size. */
export const MAX_LIMIT = 500;

/** `limit` and `cursor` of every list. */
export const pageQueryShape = {
  limit: z.coerce
    .number({ error: 'limit must be an integer from 1 to 500' })
    .int('limit must be an integer from 1 to 500')
    .min(1, 'limit must be an integer from 1 to 500')
    .max(MAX_LIMIT, 'limit must be an integer from 1 to 500')
    .default(DEFAULT_LIMIT)
    .describe('page size, default 50, max 500'),
  cursor: z.string().max(512).optional().describe('nextCursor of the previous page'),
};

/** Encodes a keyset value. */
export function encodeCursor(value: string): string {
  return Buffer.from(JSON.stringify({ k: value }), 'utf8').toString('base64url');
}

/** Decodes a cursor, or undefined when absent; null when malformed. */
export function decodeCursor(cursor: string | undefined): string | undefined | null {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof value === 'object' && value !== null && typeof (value as { k?: unknown }).k === 'string') return (value as { k: string }).k;
  } catch {
    // fall through: malformed
  }
  return null;
}

/** A page from `limit + 1` rows: `items` and the cursor of the next page. */
export function pageOf<R, T>(rows: readonly R[], limit: number, key: (row: R) => string, map: (row: R) => T): { items: T[]; nextCursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return { items: page.map(map), nextCursor: more && last !== undefined ? encodeCursor(key(last)) : null };
}

/**
 * {@link pageOf} for a list that left rows out (`skipped`: their keys and places among the rows
 * read, e.g. unreadable stored tasks, #46): the page and its cursor are decided on every row read,
 * left out or not, so a row left out neither ends the list early nor makes the next page skip rows.
 */
export function pageSkipping<R, T>(
  rows: readonly R[],
  skipped: ReadonlyArray<{ key: string; index: number }>,
  limit: number,
  key: (row: R) => string,
  map: (row: R) => T,
): { items: T[]; nextCursor: string | null } {
  if (skipped.length === 0) return pageOf(rows, limit, key, map);
  // The rows read, in their order: the skipped ones back at their places.
  const read: Array<{ key: string; row?: R }> = rows.map((row) => ({ key: key(row), row }));
  for (const s of [...skipped].sort((a, b) => a.index - b.index)) read.splice(s.index, 0, { key: s.key });
  const page = read.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.flatMap((r) => (r.row === undefined ? [] : [map(r.row)])),
    nextCursor: read.length > limit && last !== undefined ? encodeCursor(last.key) : null,
  };
}
