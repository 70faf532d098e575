/**
 * The worker's own alerts (DESIGN §5, §7): a worker cannot write `alert_log` (it never writes
 * MySQL), so an alert only it can see — its clock is skewed, it refuses all work and leaves the
 * registry, so no broker hears of it — is POSTed by the worker itself to `AX_ALERT_WEBHOOK_URL`,
 * in the body format of `AX_ALERT_WEBHOOK_FORMAT` (the same bodies as the broker's alerts).
 * Best effort: a few attempts with backoff, then a log line; it never throws.
 */
import { request } from 'undici';
import { toError, type Logger } from '@ax/kit';

/** Body formats of `AX_ALERT_WEBHOOK_FORMAT`. */
export const ALERT_WEBHOOK_FORMATS = ['generic', 'dingtalk', 'wecom', 'slack'] as const;
export type AlertWebhookFormat = (typeof ALERT_WEBHOOK_FORMATS)[number];

/** An alert of the worker (ADMIN-API.md "Shapes of … alerts"). */
export interface WorkerAlert {
  readonly kind: string;
  readonly severity: 'critical' | 'warning';
  readonly workerId: string;
  readonly message: string;
  /** ISO time. */
  readonly at: string;
}

/** The webhook body of an alert in `format`. */
export function workerAlertBody(alert: WorkerAlert, format: AlertWebhookFormat): Record<string, unknown> {
  const line = `[ax ${alert.severity}] ${alert.kind} worker ${alert.workerId}: ${alert.message} (${alert.at})`;
  switch (format) {
    case 'generic':
      return { kind: alert.kind, severity: alert.severity, workerId: alert.workerId, message: alert.message, at: alert.at };
    case 'dingtalk':
    case 'wecom':
      return { msgtype: 'text', text: { content: line } };
    case 'slack':
      return { text: line };
  }
}

/** Options of {@link createAlertWebhook}. */
export interface AlertWebhookOptions {
  /** `AX_ALERT_WEBHOOK_URL`; without it alerts are only logged. */
  readonly url: string | undefined;
  /** `AX_ALERT_WEBHOOK_FORMAT`; default `generic`. */
  readonly format: AlertWebhookFormat;
  readonly logger: Logger;
  /** Attempts per alert; default 3. */
  readonly attempts?: number;
  /** Timeout of one POST, ms; default 5000. */
  readonly timeoutMs?: number;
  /** Pause before the second attempt, doubled after each; default 1000 ms. */
  readonly backoffMs?: number;
}

/** Returns the function that sends an alert (resolves when delivered or given up; never rejects). */
export function createAlertWebhook(options: AlertWebhookOptions): (alert: WorkerAlert) => Promise<boolean> {
  const attempts = options.attempts ?? 3;
  const timeoutMs = options.timeoutMs ?? 5_000;
  return async (alert) => {
    const url = options.url;
    if (url === undefined) return false;
    let backoffMs = options.backoffMs ?? 1_000;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const response = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(workerAlertBody(alert, options.format)),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        await response.body.text();
        if (response.statusCode >= 200 && response.statusCode < 300) return true;
        throw new Error(`webhook answered HTTP ${response.statusCode}`);
      } catch (error) {
        options.logger.warn({ err: toError(error), kind: alert.kind, attempt, attempts }, 'alert webhook delivery failed');
        if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, backoffMs));
        backoffMs *= 2;
      }
    }
    return false;
  };
}
