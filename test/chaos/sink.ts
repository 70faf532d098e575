/**
 * The business endpoint of the fault drills, in the test process: every `http` task of the load
 * POSTs here. It records each call (slot identity from the body ax sends — `taskName`,
 * `expectedTime`, `executionId`, `instanceId`, `attempt` — and `X-Ax-Worker`), holds it for
 * `holdMs` (so jobs are really running when a drill strikes) and always answers
 * `{"success":true}`. `POST /alerts` records alert webhooks.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SinkCall } from './stats.js';

/** An alert webhook the sink received. */
export interface SinkAlert {
  readonly receivedMs: number;
  readonly body: Record<string, unknown>;
}

/** The running sink. */
export interface Sink {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every call so far (a live view: calls still open have `endedMs: null`). */
  readonly calls: readonly SinkCall[];
  readonly alerts: readonly SinkAlert[];
  /** Calls received in `[fromMs, toMs)`. */
  countBetween(fromMs: number, toMs: number): number;
  close(): Promise<void>;
}

type MutableCall = { -readonly [K in keyof SinkCall]: SinkCall[K] };

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts the sink on a free port of 127.0.0.1. */
export async function startSink(options: { holdMs: number }): Promise<Sink> {
  const calls: MutableCall[] = [];
  const alerts: SinkAlert[] = [];
  const server: Server = createServer((req, res) => {
    const receivedMs = Date.now();
    void (async () => {
      const text = await readBody(req);
      if (req.url === '/alerts') {
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          body = { raw: text };
        }
        alerts.push({ receivedMs, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      let parsed: { taskName?: unknown; expectedTime?: unknown; executionId?: unknown; instanceId?: unknown; attempt?: unknown };
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      const call: MutableCall = {
        taskName: String(parsed.taskName),
        expectedMs: Date.parse(String(parsed.expectedTime)),
        executionId: String(parsed.executionId),
        instanceId: String(parsed.instanceId),
        attempt: Number(parsed.attempt),
        workerId: String(req.headers['x-ax-worker'] ?? ''),
        receivedMs,
        endedMs: null,
      };
      calls.push(call);
      // The call ends when it is answered, or when the caller goes away (a killed worker).
      res.once('close', () => {
        call.endedMs ??= Date.now();
      });
      const timer = setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}', () => {
          call.endedMs ??= Date.now();
        });
      }, options.holdMs);
      res.once('close', () => clearTimeout(timer));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    alerts,
    countBetween(fromMs, toMs) {
      let n = 0;
      for (let i = calls.length - 1; i >= 0; i--) {
        const t = (calls[i] as MutableCall).receivedMs;
        if (t >= fromMs && t < toMs) n++;
        else if (t < fromMs - 60_000) break; // calls arrive in time order (within a minute)
      }
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
