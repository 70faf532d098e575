/** Prometheus series of the admin API. */
import type { Counter, Gauge, Histogram, Metrics } from '@ax/kit';

/** The admin API's own series. */
export interface ApiMetrics {
  /** `ax_admin_http_requests_total{method,route,status}`. */
  readonly requests: Counter<'method' | 'route' | 'status'>;
  /** `ax_admin_http_request_duration_seconds{method,route}`. */
  readonly duration: Histogram<'method' | 'route'>;
  /** `ax_admin_auth_refused_total{reason}`: 401/403/429 (and HMAC refusals). */
  readonly refused: Counter<'reason'>;
  /** `ax_admin_log_streams_open`: job output SSE connections open now. */
  readonly logStreams: Gauge;
}

/** Registers the series on the process registry. */
export function createApiMetrics(metrics: Metrics): ApiMetrics {
  return {
    requests: metrics.counter({ name: 'ax_admin_http_requests_total', help: 'admin API requests by route and status', labelNames: ['method', 'route', 'status'] }),
    duration: metrics.histogram({ name: 'ax_admin_http_request_duration_seconds', help: 'admin API request duration', labelNames: ['method', 'route'] }),
    refused: metrics.counter({ name: 'ax_admin_auth_refused_total', help: 'refused admin API requests (401, 403, 429, bad HMAC)', labelNames: ['reason'] }),
    logStreams: metrics.gauge({ name: 'ax_admin_log_streams_open', help: 'job output SSE streams open now' }),
  };
}
