import { describe, expect, it } from 'vitest';
import { MigrationError } from './errors.js';
import { splitSqlStatements } from './sql-split.js';

describe('splitSqlStatements', () => {
  it('splits on semicolons and drops comments and empty statements', () => {
    const sql = [
      '-- header; with a semicolon',
      '# another comment;',
      'CREATE TABLE a (id INT); /* block; comment */',
      '',
      'INSERT INTO a VALUES (1);;',
      'SELECT 1 -- trailing comment;',
      ';',
    ].join('\n');
    expect(splitSqlStatements(sql)).toEqual([
      'CREATE TABLE a (id INT)',
      'INSERT INTO a VALUES (1)',
      'SELECT 1',
    ]);
  });

  it('keeps semicolons and comment markers inside quotes', () => {
    const sql =
      "INSERT INTO t VALUES ('a;b', 'it''s -- not a comment', \"x;\\\"y\", 'back\\\\');\n" +
      'CREATE TABLE `we;ird` (c INT COMMENT \'# no\');';
    expect(splitSqlStatements(sql)).toEqual([
      "INSERT INTO t VALUES ('a;b', 'it''s -- not a comment', \"x;\\\"y\", 'back\\\\')",
      "CREATE TABLE `we;ird` (c INT COMMENT '# no')",
    ]);
  });

  it('treats -- without a following space as an operator, like MySQL', () => {
    expect(splitSqlStatements('SELECT 1--1;')).toEqual(['SELECT 1--1']);
  });

  it('keeps executable comments and refuses DELIMITER and unterminated quotes', () => {
    expect(splitSqlStatements('CREATE TABLE t (a INT) /*!50100 ENGINE=InnoDB */;')).toEqual([
      'CREATE TABLE t (a INT) /*!50100 ENGINE=InnoDB */',
    ]);
    expect(() => splitSqlStatements('DELIMITER //\nSELECT 1//')).toThrow(MigrationError);
    expect(() => splitSqlStatements("SELECT 'open")).toThrow(MigrationError);
  });
});
