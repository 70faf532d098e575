/**
 * The OpenTelemetry collector of the traced bench (#48 "the bench shows the cost with tracing on
 * and off"): an OTLP/HTTP endpoint on 127.0.0.1 that takes every `POST /v1/traces` (JSON, the
 * services are started with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), counts requests, bytes and
 * spans per span name, and answers 200 at once, as a collector that keeps up would. Decoding
 * only counts: the exporting services' cost is what the bench measures, not this one's.
 */
import { createServer } from 'node:http';

/** Starts the collector (random port). `endpoint` is what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
export async function startOtlpSink() {
  /** @type {Map<string, number>} spans per span name */
  const spansByName = new Map();
  let requests = 0;
  let bytes = 0;
  let refused = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
        refused += 1;
        res.writeHead(415).end();
        return;
      }
      requests += 1;
      bytes += body.length;
      try {
        const parsed = JSON.parse(body.toString('utf8'));
        for (const rs of parsed.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) spansByName.set(s.name, (spansByName.get(s.name) ?? 0) + 1);
          }
        }
      } catch {
        refused += 1;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${server.address().port}`;
  return {
    endpoint,
    /** The variables that turn a service's tracing on against this collector (the standard ones). */
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    /** What arrived so far: requests, bytes, refused requests, spans in all and per name. */
    summary() {
      const byName = Object.fromEntries([...spansByName.entries()].sort(([a], [b]) => a.localeCompare(b)));
      const spans = [...spansByName.values()].reduce((a, b) => a + b, 0);
      return { requests, bytes, refused, spans, byName };
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
