import { describe, expect, it } from 'vitest';
import { COMPRESSIBLE_FILE, chooseEncoding } from './content-encoding.js';

const both = ['br', 'gzip'] as const;

describe('chooseEncoding', () => {
  it('brotli when accepted, gzip when only that is, identity without the header', () => {
    expect(chooseEncoding('gzip, deflate, br, zstd', both)).toBe('br');
    expect(chooseEncoding('gzip, deflate', both)).toBe('gzip');
    expect(chooseEncoding(undefined, both)).toBe('identity');
    expect(chooseEncoding('', both)).toBe('identity');
    expect(chooseEncoding('deflate', both)).toBe('identity');
  });

  it('follows q-values, q=0 refuses, * covers what is not named', () => {
    expect(chooseEncoding('br;q=0.5, gzip;q=0.8', both)).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip', both)).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0', both)).toBe('identity');
    expect(chooseEncoding('*', both)).toBe('br');
    expect(chooseEncoding('*;q=0.3, br;q=0', both)).toBe('gzip');
    expect(chooseEncoding('identity;q=1, br;q=0.5', both)).toBe('identity');
    expect(chooseEncoding('BR;Q=1', both)).toBe('br');
  });

  it('only what the build wrote', () => {
    expect(chooseEncoding('br, gzip', ['gzip'])).toBe('gzip');
    expect(chooseEncoding('br', ['gzip'])).toBe('identity');
    expect(chooseEncoding('br, gzip', [])).toBe('identity');
  });

  it('compresses text files only', () => {
    expect(['a.js', 'b.css', 'index.html', 'favicon.svg'].every((f) => COMPRESSIBLE_FILE.test(f))).toBe(true);
    expect(['a.png', 'b.woff2', 'a.js.br'].some((f) => COMPRESSIBLE_FILE.test(f))).toBe(false);
  });
});
