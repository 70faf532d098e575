import { describe, expect, it } from 'vitest';
import { alertRouteTarget, alertRoutesSchema, planAlertRoutes, teamAlertRouteKey, MAX_ALERT_ROUTES } from './routes.js';

describe('team alert routes', () => {
  it('an alert goes to the platform webhook and to every team route that takes its kind', () => {
    const planned = planAlertRoutes('FINAL_FAILURE', { url: 'https://ops.example/hook', format: 'generic' }, [
      { url: 'https://hooks.slack.example/T1/B2/secret', format: 'slack' },
      { url: 'https://oapi.dingtalk.example/robot/send?access_token=x', format: 'dingtalk', kinds: ['SLA_MISSED'] },
      { url: 'https://qyapi.weixin.example/cgi-bin/webhook/send?key=y', format: 'wecom', kinds: ['FINAL_FAILURE', 'LOST_WORKER'] },
    ]);
    expect(planned.map((r) => [r.key.split(':')[0], r.format, r.target])).toEqual([
      ['platform', 'generic', 'https://ops.example'],
      ['team', 'slack', 'https://hooks.slack.example'],
      ['team', 'wecom', 'https://qyapi.weixin.example'],
    ]);
  });

  it('without a platform webhook and team routes an alert has nowhere to go', () => {
    expect(planAlertRoutes('NO_WORKER', undefined, [])).toEqual([]);
    expect(planAlertRoutes('NO_WORKER', undefined, [{ url: 'https://a.example/', format: 'generic', kinds: ['SLA_MISSED'] }])).toEqual([]);
  });

  it('a route edited to another URL or format is a new route; the same route twice is one', () => {
    const a = teamAlertRouteKey({ url: 'https://a.example/x', format: 'generic' });
    expect(teamAlertRouteKey({ url: 'https://a.example/x', format: 'slack' })).not.toBe(a);
    expect(teamAlertRouteKey({ url: 'https://a.example/y', format: 'generic' })).not.toBe(a);
    const twice = planAlertRoutes('X', undefined, [
      { url: 'https://a.example/x', format: 'generic' },
      { url: 'https://a.example/x', format: 'generic' },
    ]);
    expect(twice).toHaveLength(1);
  });

  it('shows only scheme and host of a webhook: its path and query may hold a token', () => {
    expect(alertRouteTarget('https://hooks.slack.example:8443/services/T/B/secret?x=1')).toBe('https://hooks.slack.example:8443');
    expect(alertRouteTarget('not a url')).toBe('');
  });

  it('the API schema takes http(s) URLs without user info, known formats, alert kinds, at most 10 routes', () => {
    expect(alertRoutesSchema.parse([{ url: 'https://a.example/h' }])).toEqual([{ url: 'https://a.example/h', format: 'generic' }]);
    for (const bad of [
      [{ url: 'ftp://a.example/h' }],
      [{ url: 'https://user:pw@a.example/h' }],
      [{ url: 'https://a.example/h', format: 'teams' }],
      [{ url: 'https://a.example/h', kinds: ['final_failure'] }],
      [{ url: 'https://a.example/h', extra: 1 }],
      Array.from({ length: MAX_ALERT_ROUTES + 1 }, (_, i) => ({ url: `https://a.example/${i}` })),
    ]) {
      expect(alertRoutesSchema.safeParse(bad).success, JSON.stringify(bad).slice(0, 80)).toBe(false);
    }
  });
});
