/**
 * JSON columns, decoded and encoded in one place.
 *
 * MariaDB stores `JSON` as LONGTEXT and returns text; MySQL 8 returns a native JSON value that
 * mysql2 would parse into an object. {@link createPool} sets `jsonStrings: true`, so both engines
 * hand us text and a JSON *string* value (`"abc"`) cannot be mistaken for already-decoded data.
 * {@link decodeJson} still accepts already-decoded values (a pool made elsewhere, a `Buffer`).
 */
import { JsonDecodeError } from './errors.js';

/** Optional validation of a decoded value (a zod schema's `parse` fits). */
export type JsonParser<T> = (raw: unknown) => T;

function parseText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const preview = text.length > 60 ? `${text.slice(0, 60)}…` : text;
    throw new JsonDecodeError(`column holds invalid JSON: ${JSON.stringify(preview)}`, {
      cause: err,
    });
  }
}

/**
 * Decodes a JSON column value: text (MariaDB, or MySQL with `jsonStrings`) is parsed, a
 * `Buffer` is parsed as UTF-8, anything else (an object MySQL already decoded) is taken as is.
 * SQL NULL is an error: use {@link decodeJsonNullable} for nullable columns.
 * @param parse optional validator applied to the decoded value (e.g. `schema.parse`).
 */
export function decodeJson<T = unknown>(value: unknown, parse?: JsonParser<T>): T {
  if (value === null || value === undefined) {
    throw new JsonDecodeError('JSON column is NULL where a value is required');
  }
  let raw: unknown;
  if (typeof value === 'string') raw = parseText(value);
  else if (Buffer.isBuffer(value)) raw = parseText(value.toString('utf8'));
  else raw = value;
  return parse === undefined ? (raw as T) : parse(raw);
}

/** {@link decodeJson} for a nullable column: SQL NULL (or undefined) gives `null`. */
export function decodeJsonNullable<T = unknown>(value: unknown, parse?: JsonParser<T>): T | null {
  return value === null || value === undefined ? null : decodeJson(value, parse);
}

/**
 * Encodes a value for a JSON column placeholder. `undefined`, functions and symbols have no
 * JSON form and throw rather than silently writing SQL NULL; BigInts must be converted by the
 * caller. `null` encodes as the JSON literal `null` (use {@link encodeJsonNullable} for SQL NULL).
 */
export function encodeJson(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) {
    throw new TypeError(`cannot encode ${typeof value} as JSON`);
  }
  return text;
}

/** {@link encodeJson}, except that `null`/`undefined` become SQL NULL. */
export function encodeJsonNullable(value: unknown): string | null {
  return value === null || value === undefined ? null : encodeJson(value);
}
