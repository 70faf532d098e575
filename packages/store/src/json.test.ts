import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowDataPacket } from 'mysql2/promise';
// @ax/testing's index (owned by another author) does not export these fixtures yet; switch
// to `from '@ax/testing'` once it does.
// eslint-disable-next-line import-x/no-relative-packages
import { createTestDatabase } from '../../testing/src/database.js';
// eslint-disable-next-line import-x/no-relative-packages
import type { TestDatabase } from '../../testing/src/database.js';
import { JsonDecodeError } from './errors.js';
import { decodeJson, decodeJsonNullable, encodeJson, encodeJsonNullable } from './json.js';

describe('decodeJson', () => {
  it('parses text, as MariaDB (and MySQL with jsonStrings) returns it', () => {
    expect(decodeJson('{"a":1,"b":[true,null]}')).toEqual({ a: 1, b: [true, null] });
    expect(decodeJson('"abc"')).toBe('abc');
    expect(decodeJson('42')).toBe(42);
  });

  it('takes an already-decoded object, as MySQL returns it without jsonStrings', () => {
    const obj = { type: 'cron', expr: '0 2 * * *' };
    expect(decodeJson(obj)).toBe(obj);
    expect(decodeJson([1, 2])).toEqual([1, 2]);
  });

  it('parses a Buffer as UTF-8', () => {
    expect(decodeJson(Buffer.from('{"ü":"✓"}', 'utf8'))).toEqual({ ü: '✓' });
  });

  it('applies the validator to the decoded value', () => {
    const parse = (raw: unknown): { n: number } => {
      if (typeof raw !== 'object' || raw === null || typeof (raw as { n?: unknown }).n !== 'number') {
        throw new TypeError('not {n:number}');
      }
      return raw as { n: number };
    };
    expect(decodeJson('{"n":3}', parse).n).toBe(3);
    expect(() => decodeJson('{"n":"x"}', parse)).toThrow('not {n:number}');
  });

  it('refuses invalid JSON and SQL NULL with JsonDecodeError', () => {
    expect(() => decodeJson('{oops')).toThrow(JsonDecodeError);
    expect(() => decodeJson(null)).toThrow(JsonDecodeError);
    expect(decodeJsonNullable(null)).toBeNull();
    expect(decodeJsonNullable('[1]')).toEqual([1]);
  });
});

describe('encodeJson', () => {
  it('encodes values and refuses what has no JSON form', () => {
    expect(encodeJson({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(encodeJson(null)).toBe('null');
    expect(() => encodeJson(undefined)).toThrow(TypeError);
    expect(encodeJsonNullable(undefined)).toBeNull();
    expect(encodeJsonNullable(null)).toBeNull();
  });
});

describe('JSON columns on the real server', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    await db.pool.query('CREATE TABLE j (id INT PRIMARY KEY, v JSON NULL)');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('round-trips objects, strings and NULL through encodeJson/decodeJson', async () => {
    const values: unknown[] = [{ exec: { type: 'shell', command: ['echo', 'héllo ✓'] } }, 'just a string', [], null];
    for (const [i, v] of values.entries()) {
      await db.pool.query('INSERT INTO j (id, v) VALUES (?, ?)', [i, encodeJson(v)]);
    }
    await db.pool.query('INSERT INTO j (id, v) VALUES (?, ?)', [99, encodeJsonNullable(null)]);
    const [rows] = await db.pool.query<Array<RowDataPacket & { id: number; v: unknown }>>(
      'SELECT id, v FROM j ORDER BY id',
    );
    // The pool hands JSON over as text on both engines (jsonStrings), so one decoder fits all.
    for (const row of rows) expect(row.v === null || typeof row.v === 'string').toBe(true);
    expect(rows.slice(0, 4).map((r) => decodeJson(r.v))).toEqual(values);
    expect(decodeJsonNullable(rows[4]?.v)).toBeNull();
  });
});
