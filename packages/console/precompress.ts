/**
 * A Vite plugin that writes `<file>.br` and `<file>.gz` beside each compressible file of the
 * build (issue #47: the console's 640 KB went out uncompressed), which admin-api sends by the
 * request's Accept-Encoding (services/admin-api/src/console.ts). Compressed once here at the
 * highest levels, so the server spends no CPU per request; a variant no smaller than its file
 * is not written.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { COMPRESSIBLE_FILE, PRECOMPRESSED, type Precompressed } from '@ax/core';
import type { Plugin } from 'vite';

const COMPRESS: Record<Precompressed, (data: Uint8Array) => Uint8Array> = {
  br: (data) => brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: data.length } }),
  gzip: (data) => gzipSync(data, { level: constants.Z_BEST_COMPRESSION }),
};

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

/** Writes the variants of every compressible file under `dir`; the bytes before and after, for the build's log. */
export function precompressDir(dir: string): { files: number; bytes: number; brotliBytes: number } {
  const totals = { files: 0, bytes: 0, brotliBytes: 0 };
  for (const file of filesUnder(dir)) {
    if (!COMPRESSIBLE_FILE.test(file)) continue;
    const data = readFileSync(file);
    totals.files += 1;
    totals.bytes += data.length;
    for (const { encoding, suffix } of PRECOMPRESSED) {
      const packed = COMPRESS[encoding](data);
      if (packed.length >= data.length) continue;
      writeFileSync(`${file}${suffix}`, packed);
      if (encoding === 'br') totals.brotliBytes += packed.length;
    }
  }
  return totals;
}

export function precompress(): Plugin {
  let outDir = 'dist';
  let log: (text: string) => void = () => undefined;
  return {
    name: 'ax-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = join(config.root, config.build.outDir);
      log = (text) => config.logger.info(text);
    },
    closeBundle() {
      const { files, bytes, brotliBytes } = precompressDir(outDir);
      log(`precompressed ${files} files: ${Math.round(bytes / 1024)} KB, ${Math.round(brotliBytes / 1024)} KB as brotli`);
    },
  };
}
