/**
 * The raw body of a node `IncomingMessage`, for the adapters whose frameworks build on node's
 * http (express, koa, nest, plain node). The signature covers the exact bytes, so in order:
 *
 * 1. raw bytes a body parser kept (`req.rawBody` from `express.json({ verify: captureRawBody })`,
 *    koa-bodyparser's `ctx.request.rawBody`, Nest's `rawBody: true`), or a Buffer `req.body`
 *    (`express.raw()`);
 * 2. the stream itself when nobody read it yet;
 * 3. a plain `express.json()` (or any JSON parser) ran first and kept no bytes: the parsed body
 *    re-serialized with `JSON.stringify`. The worker writes its body with `JSON.stringify`, and
 *    `JSON.parse` then `JSON.stringify` gives those bytes back exactly (key order, numbers and
 *    escapes round-trip), so the signature verifies over them; if it does not, the answer says
 *    the parser may have changed the body and how to keep the raw bytes (`reparsed`). A parsed
 *    body is trusted only through that check: the HMAC covers what the handler then reads.
 * 4. otherwise the body was read and is neither bytes nor JSON: `RAW_BODY_UNAVAILABLE` (500), a
 *    set-up mistake of the service, with the line that fixes it — never a misleading 401.
 */
import type { IncomingMessage } from 'node:http';
import { ExecutorCallError } from './execution.js';

/** Where raw bytes may already be. */
export interface RawBodyHolders {
  /** `req.rawBody` / `ctx.request.rawBody`. */
  readonly rawBody?: unknown;
  /** `req.body` / `ctx.request.body`: a Buffer is the raw bytes (express.raw). */
  readonly body?: unknown;
}

/** The raw body, or the error to answer. */
export type RawBodyResult =
  | { readonly ok: true; readonly rawBody: Buffer | string; /** Re-serialized from a parsed body (3. above): the hint for a signature that does not verify. */ readonly reparsed?: string }
  | { readonly ok: false; readonly error: ExecutorCallError };

/** Whether `req`'s body stream was already read (by a body parser). */
function consumed(req: IncomingMessage): boolean {
  return req.readableEnded || (req as { _body?: unknown })._body === true;
}

/** Reads the rest of `req` up to `limitBytes` (more = `BODY_TOO_LARGE`, and the rest is not read). */
export function readStream(req: IncomingMessage, limitBytes: number): Promise<RawBodyResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    return Promise.resolve({ ok: false, error: new ExecutorCallError('BODY_TOO_LARGE', `the body is larger than ${limitBytes} bytes`) });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (result: RawBodyResult): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        req.pause();
        done({ ok: false, error: new ExecutorCallError('BODY_TOO_LARGE', `the body is larger than ${limitBytes} bytes`) });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => done({ ok: true, rawBody: Buffer.concat(chunks) });
    const onError = (error: Error): void => done({ ok: false, error: new ExecutorCallError('VALIDATION_FAILED', `reading the body failed: ${error.message}`) });
    const onAborted = (): void => done({ ok: false, error: new ExecutorCallError('VALIDATION_FAILED', 'the caller hung up before the body was read') });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

/**
 * The raw body of `req` (see the module comment). `fix` is the sentence that tells the
 * developer what to add when the body was parsed without keeping its bytes.
 */
export async function rawBodyOf(req: IncomingMessage, holders: RawBodyHolders, limitBytes: number, fix: string): Promise<RawBodyResult> {
  const { rawBody, body } = holders;
  if (Buffer.isBuffer(rawBody) || typeof rawBody === 'string') return { ok: true, rawBody };
  if (Buffer.isBuffer(body)) return { ok: true, rawBody: body };
  if (!consumed(req)) return readStream(req, limitBytes);
  if (body !== null && typeof body === 'object') {
    return { ok: true, rawBody: JSON.stringify(body), reparsed: `Checked over the body re-serialized from the parsed JSON (a body parser read it first and kept no raw bytes): if the keys are right, the parser changed the body. ${fix}` };
  }
  return {
    ok: false,
    error: new ExecutorCallError(
      'RAW_BODY_UNAVAILABLE',
      `the ax executor cannot check the signature: a body parser read the request body before it and kept no raw bytes (the signature covers the exact bytes). ${fix}`,
    ),
  };
}

/** Warns once per process and executor, through node's warning channel, about a set-up mistake. */
export function warnOnce(state: { warned: boolean }, message: string): void {
  if (state.warned) return;
  state.warned = true;
  process.emitWarning(message, { code: 'AX_SDK_RAW_BODY_UNAVAILABLE' });
}
