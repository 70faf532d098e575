/**
 * The link of a run's trace in the operators' tracing UI (#48): `AX_TRACE_URL_TEMPLATE` (answered
 * by `GET /status` as `traceUrlTemplate`) with the trace id in place of `{traceId}`. Null without
 * a template, an id, or when the result is not an http(s) URL (never a `javascript:` link).
 */
export function traceUrl(template: string | null | undefined, traceId: string | null | undefined): string | null {
  if (template == null || traceId == null || !/^[0-9a-f]{32}$/.test(traceId)) return null;
  const url = template.split('{traceId}').join(traceId);
  return /^https?:\/\//i.test(url) ? url : null;
}
