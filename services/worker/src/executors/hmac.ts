/** The HMAC signature of HTTP executions (ADMIN-API.md "HTTP executors"). */
import { createHmac } from 'node:crypto';

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` with the executor secret. */
export function signatureOf(secret: string, timestampMs: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampMs}.${body}`).digest('hex')}`;
}
