/**
 * Precompressed static files (the console's build, served by admin-api): the build writes
 * `<file>.br` and `<file>.gz` beside each compressible file, and the server sends the one the
 * client's `Accept-Encoding` prefers. This is the one list of those encodings and their suffixes
 * both sides read, and the choice itself (pure).
 */

/** The encodings a build writes, best first (the server's preference among equal q-values). */
export const PRECOMPRESSED = [
  { encoding: 'br', suffix: '.br' },
  { encoding: 'gzip', suffix: '.gz' },
] as const;

export type Precompressed = (typeof PRECOMPRESSED)[number]['encoding'];

/** Files worth compressing: text the browser loads. Images and fonts are compressed already. */
export const COMPRESSIBLE_FILE = /\.(?:js|mjs|css|html|svg|json|map|txt|webmanifest)$/i;

/** The q-value `accept` gives `coding` (an explicit entry, else `*`), or undefined when it names neither. */
function qOf(entries: ReadonlyMap<string, number>, coding: string): number | undefined {
  return entries.get(coding) ?? entries.get('*');
}

function parse(accept: string): Map<string, number> {
  const entries = new Map<string, number>();
  for (const part of accept.split(',')) {
    const [name = '', ...params] = part.split(';').map((p) => p.trim());
    if (name === '') continue;
    let q = 1;
    for (const param of params) {
      const m = /^q\s*=\s*([0-9.]+)$/i.exec(param);
      if (m !== null) q = Math.min(1, Math.max(0, Number(m[1]) || 0));
    }
    entries.set(name.toLowerCase(), q);
  }
  return entries;
}

/**
 * The encoding to send for an `Accept-Encoding` header (RFC 9110 §12.5.3) among `available`:
 * the highest q-value above 0, ties going to the earlier of {@link PRECOMPRESSED} and then to a
 * compressed one over identity; `identity` when the header is absent, names none of them, or
 * prefers identity. Identity is also the
 * answer when the client refuses it too (`identity;q=0`): the file is sent rather than a 406.
 */
export function chooseEncoding(accept: string | undefined, available: readonly Precompressed[]): Precompressed | 'identity' {
  if (accept === undefined || accept.trim() === '') return 'identity';
  const entries = parse(accept);
  // `*` covers identity too when identity is not named (RFC 9110 §12.5.3); unnamed, it is
  // acceptable but no more wanted than anything listed (as the `negotiator` package reads it).
  const identityQ = qOf(entries, 'identity') ?? Math.min(1, ...entries.values());
  let best: Precompressed | 'identity' = 'identity';
  let bestQ = 0;
  for (const { encoding } of PRECOMPRESSED) {
    if (!available.includes(encoding)) continue;
    const q = qOf(entries, encoding) ?? 0;
    if (q > bestQ) {
      best = encoding;
      bestQ = q;
    }
  }
  return bestQ > 0 && bestQ >= identityQ ? best : 'identity';
}
