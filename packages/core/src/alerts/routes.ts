/**
 * Team alert routes (ADMIN-API.md "Teams", DESIGN §11 "Noisy neighbours": alerts reach the team
 * they are about). A team lists webhooks (`alertRoutes`) its alerts go to, besides the
 * platform's `AX_ALERT_WEBHOOK_URL`; each may keep only some alert kinds. Pure: the schema the
 * API validates with, and the plan of which routes one alert goes to, which the broker's alert
 * loop follows.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** Body formats of a webhook (the same as `AX_ALERT_WEBHOOK_FORMAT`). */
export const ALERT_ROUTE_FORMATS = ['generic', 'slack', 'dingtalk', 'wecom'] as const;
export type AlertRouteFormat = (typeof ALERT_ROUTE_FORMATS)[number];

/** Most routes one team may have: each alert is POSTed once per route. */
export const MAX_ALERT_ROUTES = 10;

/** A team's webhook. */
export interface AlertRoute {
  readonly url: string;
  readonly format: AlertRouteFormat;
  /** Only these alert kinds; absent = every kind. */
  readonly kinds?: readonly string[] | undefined;
}

const httpUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without user info');

/** One route as the API takes it. */
export const alertRouteSchema = z.strictObject({
  url: httpUrl,
  format: z.enum(ALERT_ROUTE_FORMATS).default('generic'),
  kinds: z
    .array(z.string().regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'must be an alert kind such as FINAL_FAILURE'))
    .min(1)
    .max(32)
    .optional()
    .describe('only these alert kinds; absent = every kind'),
});

/** A team's routes as the API takes them. */
export const alertRoutesSchema = z.array(alertRouteSchema).max(MAX_ALERT_ROUTES);

/** `scheme://host[:port]` of a webhook: what may be shown of it (its path often holds a token). */
export function alertRouteTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return '';
  }
}

/** The route's key in delivery records: a team route edited to another URL or format is a new route. */
export function teamAlertRouteKey(route: Pick<AlertRoute, 'url' | 'format'>): string {
  return `team:${createHash('sha256').update(`${route.format}\n${route.url}`).digest('hex').slice(0, 32)}`;
}

/** The key of the platform's webhook (`AX_ALERT_WEBHOOK_URL`) in delivery records. */
export const PLATFORM_ALERT_ROUTE = 'platform';
/** The key recorded for an alert that had no route at all (delivery `not_configured`). */
export const NO_ALERT_ROUTE = 'none';

/** One webhook an alert is to be POSTed to. */
export interface PlannedAlertRoute {
  /** `platform` or `team:<hash>`. */
  readonly key: string;
  readonly url: string;
  readonly format: AlertRouteFormat;
  /** {@link alertRouteTarget} of the URL. */
  readonly target: string;
}

/**
 * The webhooks an alert of `kind` goes to: the platform's (when configured), then each route of
 * its team that takes that kind. Empty: the alert has nowhere to go (`not_configured`). Routes of
 * the same URL and format are one route.
 */
export function planAlertRoutes(
  kind: string,
  platform: { readonly url: string; readonly format: AlertRouteFormat } | undefined,
  teamRoutes: readonly AlertRoute[],
): PlannedAlertRoute[] {
  const planned: PlannedAlertRoute[] = [];
  if (platform !== undefined) planned.push({ key: PLATFORM_ALERT_ROUTE, url: platform.url, format: platform.format, target: alertRouteTarget(platform.url) });
  const seen = new Set<string>();
  for (const route of teamRoutes) {
    if (route.kinds !== undefined && !route.kinds.includes(kind)) continue;
    const key = teamAlertRouteKey(route);
    if (seen.has(key)) continue;
    seen.add(key);
    planned.push({ key, url: route.url, format: route.format, target: alertRouteTarget(route.url) });
  }
  return planned;
}
