/**
 * The no-op business endpoint of the bench: answers every POST with 200 `{"success":true}` at
 * once and records each call by its `Idempotency-Key` (`<taskName>:<expectedTime>:<runNo>`, the
 * key ax sends, R18; the BullMQ peer worker sends the same shape) with the time it arrived.
 */
import { createServer } from 'node:http';
import { parseIdempotencyKey } from './keys.mjs';

/** Starts the sink on 127.0.0.1 (random port). */
export async function startSink() {
  /** @type {Map<string, number>} */
  const counts = new Map();
  /** @type {Map<string, number>} first arrival (Date.now()) per key */
  const firstAt = new Map();
  let total = 0;
  const server = createServer((req, res) => {
    const key = req.headers['idempotency-key'];
    const at = Date.now();
    req.resume();
    req.on('end', () => {
      total += 1;
      if (typeof key === 'string') {
        const n = counts.get(key) ?? 0;
        counts.set(key, n + 1);
        if (n === 0) firstAt.set(key, at);
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 16 }).end('{"success":true}');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  return {
    url: `http://127.0.0.1:${port}/noop`,
    counts,
    firstAt,
    get total() {
      return total;
    },
    /** Start lags (arrival − expected time, ms) of the first call of each key. */
    startLags(fromMs = -Infinity, toMs = Infinity) {
      const lags = [];
      for (const [key, at] of firstAt) {
        const parsed = parseIdempotencyKey(key);
        if (parsed && parsed.expectedMs >= fromMs && parsed.expectedMs < toMs) lags.push(at - parsed.expectedMs);
      }
      return lags;
    },
    reset() {
      counts.clear();
      firstAt.clear();
      total = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
