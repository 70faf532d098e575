import { describe, expect, it } from 'vitest';
import { checkBufferPool, privateMariaDbArgs } from './private-mariadb.mjs';

describe('checkBufferPool', () => {
  it('takes the sizes mariadbd takes, in upper case', () => {
    expect(checkBufferPool('2G')).toBe('2G');
    expect(checkBufferPool('512m')).toBe('512M');
  });
  it('refuses anything else in one line naming the flag and the value', () => {
    expect(() => checkBufferPool('2GB')).toThrow('--buffer-pool takes a size such as 2G or 512M, got 2GB');
    expect(() => checkBufferPool('shared', 'pool')).toThrow('--pool takes a size such as 2G or 512M, got shared');
    expect(() => checkBufferPool('0G')).toThrow(/got 0G$/);
    expect(() => checkBufferPool('2')).toThrow(/got 2$/); // bytes: mariadbd would refuse to start
    expect(() => checkBufferPool('')).toThrow("got ''");
    expect(() => checkBufferPool(undefined)).toThrow('got undefined');
  });
});

describe('privateMariaDbArgs', () => {
  it('sizes the pool, a 1 GB redo log and 300 connections', () => {
    expect(privateMariaDbArgs('2g')).toEqual(['--innodb-buffer-pool-size=2G', '--innodb-log-file-size=1G', '--max-connections=300']);
  });
});
