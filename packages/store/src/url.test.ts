import { describe, expect, it } from 'vitest';
import { InvalidDatabaseUrlError } from './errors.js';
import { parseMysqlUrl, redactMysqlUrl, withDatabase } from './url.js';

describe('parseMysqlUrl', () => {
  it('reads the default URL', () => {
    expect(parseMysqlUrl('mysql://root@127.0.0.1:3306/ax')).toEqual({
      host: '127.0.0.1',
      port: 3306,
      user: 'root',
      password: '',
      database: 'ax',
    });
  });

  it('decodes user and password, defaults the port and allows no database', () => {
    expect(parseMysqlUrl('mysql://a%40b:p%2Fw%3A@db.internal')).toEqual({
      host: 'db.internal',
      port: 3306,
      user: 'a@b',
      password: 'p/w:',
      database: null,
    });
  });

  it('refuses other schemes, query parameters and bad database names without echoing the password', () => {
    for (const bad of [
      'postgres://u:secret@h/ax',
      'mysql://u:secret@h/ax?ssl=true',
      'mysql://u:secret@h/ax/extra',
      'mysql://u:secret@h/a%20b',
      'not a url secret',
    ]) {
      let caught: unknown;
      try {
        parseMysqlUrl(bad);
      } catch (err) {
        caught = err;
      }
      expect(caught, bad).toBeInstanceOf(InvalidDatabaseUrlError);
      if (bad.includes(':secret@')) expect((caught as Error).message).not.toContain('secret');
    }
  });
});

describe('redactMysqlUrl / withDatabase', () => {
  it('masks the password only', () => {
    expect(redactMysqlUrl('mysql://root:s3cr%40t@127.0.0.1:3306/ax')).toBe('mysql://root:***@127.0.0.1:3306/ax');
    expect(redactMysqlUrl('mysql://root@127.0.0.1:3306/ax')).toBe('mysql://root@127.0.0.1:3306/ax');
  });

  it('swaps the database', () => {
    expect(withDatabase('mysql://root@127.0.0.1:3306/ax', 'ax_test_1')).toBe('mysql://root@127.0.0.1:3306/ax_test_1');
    expect(withDatabase('mysql://root@127.0.0.1:3306', 'b')).toBe('mysql://root@127.0.0.1:3306/b');
    expect(withDatabase('mysql://root@127.0.0.1:3306/ax', null)).toBe('mysql://root@127.0.0.1:3306');
  });
});
