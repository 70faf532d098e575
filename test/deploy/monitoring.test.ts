// deploy/prometheus/prometheus.yml scrapes every service of the compose stack (and pods on
// Kubernetes); deploy/grafana/ax-dashboard.json is valid and queries metrics the services
// register (deployed-services.test.ts checks the same names against live /metrics).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { arr, deployDir, obj, parseYamlDocuments, readRepoFile, repo, SERVICES } from './support.js';

const prometheus = obj(parseYamlDocuments(readRepoFile('deploy/prometheus/prometheus.yml'), 'prometheus.yml')[0], 'prometheus.yml');
const jobs = arr(prometheus.scrape_configs, 'scrape_configs').map((j) => obj(j, 'scrape_config'));
const compose = obj(parseYamlDocuments(readFileSync(path.join(deployDir, 'docker-compose.yml'), 'utf8'), 'docker-compose.yml')[0], 'compose');
const composeServices = obj(compose.services, 'services');

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(readRepoFile('deploy/grafana/ax-dashboard.json')) as { uid: string; title: string; panels: Panel[] };

/** Metric names registered in the services' sources (`name: 'ax_…'`). */
function registeredMetricNames(): Set<string> {
  const names = new Set<string>();
  for (const service of readdirSync(path.join(repo, 'services'))) {
    const src = path.join(repo, 'services', service, 'src');
    for (const f of readdirSync(src).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))) {
      for (const m of readFileSync(path.join(src, f), 'utf8').matchAll(/name:\s*'(ax_[a-z0-9_]+)'/g)) names.add(m[1] ?? '');
    }
  }
  return names;
}

describe('deploy/prometheus/prometheus.yml', () => {
  it.each(SERVICES)('scrapes every $name of the compose stack on /metrics:$port', ({ name, port }) => {
    const job = jobs.find((j) => j.job_name === `ax-${name}`);
    expect(job, `job ax-${name}`).toBeDefined();
    expect(job?.metrics_path ?? '/metrics').toBe('/metrics');
    const targets = arr(job?.static_configs, 'static_configs').flatMap((c) => arr(obj(c, 'static_config').targets, 'targets')).map(String);
    const instances = Object.entries(composeServices)
      // long-running services only: a one-shot of an image (migrate, enroll-workers) has nothing to scrape
      .filter(([, s]) => obj(obj(s, 'service').build ?? {}, 'build').target === name && obj(s, 'service').restart !== 'no')
      .map(([key]) => `${key}:${port}`);
    expect(instances.length).toBeGreaterThan(0);
    expect([...targets].sort()).toEqual(instances.sort());
  });

  it('discovers annotated pods in the ax namespace on Kubernetes', () => {
    const pods = jobs.find((j) => j.job_name === 'ax-kubernetes-pods');
    const sd = arr(pods?.kubernetes_sd_configs, 'kubernetes_sd_configs').map((c) => obj(c, 'sd'));
    expect(sd[0]?.role).toBe('pod');
    expect(JSON.stringify(pods?.relabel_configs)).toContain('__meta_kubernetes_pod_annotation_prometheus_io_scrape');
  });
});

describe('deploy/grafana/ax-dashboard.json', () => {
  const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  const titles = dashboard.panels.map((p) => p.title.toLowerCase());

  it('has the panels an operator looks at first', () => {
    expect(dashboard.uid).toBe('ax-overview');
    for (const wanted of ['fire lag', 'dispatch → ack latency', 'dispatch rate', 'ack timeouts', 'retries', 'lost workers', 'queue depth', 'worker running slots', 'api requests']) {
      expect(titles.some((t) => t.includes(wanted)), wanted).toBe(true);
    }
    for (const p of dashboard.panels.filter((x) => x.type !== 'row')) expect(p.targets?.length, p.title).toBeGreaterThan(0);
  });

  it('queries only metric names the services register, and at least one of each service', () => {
    const registered = registeredMetricNames();
    const used = new Set(queries.flatMap((q) => [...q.matchAll(/\b(ax_[a-z0-9_]+?)(?:_bucket|_sum|_count)?\b/g)].map((m) => m[1] ?? '')));
    expect([...used].filter((n) => !registered.has(n))).toEqual([]);
    for (const prefix of ['ax_scheduler_', 'ax_dispatch', 'ax_worker_', 'ax_admin_']) {
      expect([...used].some((n) => n.startsWith(prefix)), prefix).toBe(true);
    }
  });
});
