// Masking of job output that arrives in pieces: a secret split across two pieces is masked
// whole, and ordinary output is never held back.
import { describe, expect, it } from 'vitest';
import { secretMask } from '../executors/secret-mask.js';
import { StreamMask } from './stream-mask.js';

const SECRET = 's3cret-token-value';

function run(pieces: readonly (string | Buffer)[], values: string[] = [SECRET]): { out: string; emitted: string[] } {
  const mask = new StreamMask(secretMask(values).patterns);
  const emitted = pieces.map((p) => mask.push(typeof p === 'string' ? Buffer.from(p) : p).toString('utf8'));
  emitted.push(mask.end().toString('utf8'));
  return { out: emitted.join(''), emitted };
}

describe('stream mask', () => {
  it('a secret split across two pieces, at every split point, is masked whole and nothing of it is shipped before', () => {
    const text = `token=${SECRET}; bye\n`;
    for (let cut = 1; cut < text.length; cut++) {
      const { out, emitted } = run([text.slice(0, cut), text.slice(cut)]);
      expect(out, `cut at ${cut}`).toBe('token=***; bye\n');
      // No emitted piece ever contains a part of the value of 2+ characters ("s3" … "ue").
      for (const piece of emitted) expect(piece.replace('***', '')).not.toMatch(/s3c|cret|token-|value/);
    }
  });

  it('a secret split over many one-byte pieces, and several secrets in one piece, are masked', () => {
    expect(run([...`a ${SECRET} b`].map((c) => c)).out).toBe('a *** b');
    expect(run([`${SECRET}${SECRET}\nother-secret x ${SECRET}`], [SECRET, 'other-secret']).out).toBe('******\n*** x ***');
  });

  it('holds back only what could start a secret: a printed line is shipped at once', () => {
    const mask = new StreamMask(secretMask([SECRET]).patterns);
    expect(mask.push(Buffer.from('line 1\n')).toString()).toBe('line 1\n');
    expect(mask.heldBytes).toBe(0);
    expect(mask.push(Buffer.from('value s3cr')).toString()).toBe('value ');
    expect(mask.heldBytes).toBe(4);
    // Not the secret after all: released with what follows.
    expect(mask.push(Buffer.from('ew loose\n')).toString()).toBe('s3crew loose\n');
    expect(mask.push(Buffer.from('s3c')).toString()).toBe('');
    expect(mask.end().toString()).toBe('s3c'); // an unfinished value is not a value
  });

  it('a multi-line secret printed line by line is masked per line; bytes that are not UTF-8 pass unchanged', () => {
    const pem = '-----BEGIN KEY-----\nMIIBVwIBADANBgkqhkiG\n-----END KEY-----';
    expect(run(['x\n-----BEGIN KEY-----\nMIIBVw', 'IBADANBgkqhkiG\n'], [pem]).out).toBe('x\n***\n***\n');
    const binary = Buffer.from([0xff, 0x00, 0xfe, 0x80, 0x0a]);
    const mask = new StreamMask(secretMask([SECRET]).patterns);
    expect(Buffer.concat([mask.push(binary), mask.end()]).equals(binary)).toBe(true);
  });

  it('with no secrets the piece itself is returned (no copy)', () => {
    const mask = new StreamMask([]);
    const piece = Buffer.from('hello');
    expect(mask.push(piece)).toBe(piece);
  });
});
