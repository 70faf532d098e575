// The AX_HTTP_EXECUTOR_ALLOW values shipped in deploy/ must work with the worker's address
// checks: each entry parses as the worker reads it, and the cluster names (which resolve to
// private addresses, refused unless marked) carry `internal:`.
import { describe, expect, it } from 'vitest';
// eslint-disable-next-line import-x/no-relative-packages -- the worker's own parser: deploy/ must pass exactly what the worker checks.
import { allowEntryProblem } from '../../services/worker/src/executors/host-allow.js';
import { readRepoFile } from './support.js';

const shipped: Array<[file: string, value: string]> = [
  ['deploy/docker-compose.yml', /AX_HTTP_EXECUTOR_ALLOW:\s*"?([^"\n]+)"?/.exec(readRepoFile('deploy/docker-compose.yml'))?.[1] ?? ''],
  ['deploy/k8s/base/configmap.yaml', /AX_HTTP_EXECUTOR_ALLOW:\s*"?([^"\n]+)"?/.exec(readRepoFile('deploy/k8s/base/configmap.yaml'))?.[1] ?? ''],
];

describe('the allow-lists of deploy/', () => {
  it.each(shipped)('%s: every entry parses, and each cluster name is marked internal:', (_file, value) => {
    const entries = value.split(',').map((e) => e.trim());
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(allowEntryProblem(entry), entry).toBeUndefined();
      expect(entry, 'a service name of the cluster resolves to a private address').toMatch(/^internal:/);
    }
  });
});
