/**
 * Sends a route's JSON reply, compressed when it is worth it: a body of at least
 * {@link COMPRESS_JSON_MIN_BYTES} goes out as brotli or gzip, whichever the request's
 * Accept-Encoding prefers (core's `chooseEncoding`, the console's static files use the same
 * choice), with `Vary: Accept-Encoding`. Lists of a few hundred tasks or instances are tens to
 * hundreds of KB of repetitive JSON and shrink about tenfold. Smaller bodies go as they are: under
 * about one packet, compression saves no round trip and costs CPU. Streams (SSE, log pages,
 * /metrics) never come here: their routes send for themselves.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Request, Response } from 'express';
import { chooseEncoding } from '@ax/core';

/** The smallest JSON body compressed, in bytes (about one TCP segment). */
export const COMPRESS_JSON_MIN_BYTES = 1400;

/**
 * Brotli quality for bodies made per request: 4 compresses JSON close to gzip -9 at a fraction of
 * quality 11's CPU (11 is for the console's build, compressed once).
 */
const BROTLI_QUALITY = 4;

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** `body` as JSON with `status`, as express's `res.json` would, compressed per {@link COMPRESS_JSON_MIN_BYTES}. */
export async function sendJson(req: Request, res: Response, status: number, body: unknown): Promise<void> {
  const json = Buffer.from(JSON.stringify(body) ?? 'null', 'utf8');
  res.status(status);
  // As res.json: a type the route set stays.
  if (res.get('content-type') === undefined) res.type('application/json; charset=utf-8');
  if (json.length < COMPRESS_JSON_MIN_BYTES) {
    send(res, json);
    return;
  }
  res.vary('Accept-Encoding');
  const encoding = chooseEncoding(req.get('accept-encoding'), ['br', 'gzip']);
  if (encoding === 'identity') {
    send(res, json);
    return;
  }
  // On libuv's thread pool, not the event loop: a 1 MB list does not stall other requests.
  const packed =
    encoding === 'br'
      ? await brotli(json, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: json.length, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } })
      : await gz(json);
  res.setHeader('content-encoding', encoding);
  send(res, packed);
}

function send(res: Response, bytes: Buffer): void {
  res.setHeader('content-length', bytes.length);
  res.end(bytes);
}
