import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTaskDefinitionOrThrow } from '../task/definition.js';
import { DEFAULT_RETRY, backoffPolicyOf } from './defaults.js';

const docsDir = new URL('../../../../docs/', import.meta.url);

describe('DEFAULT_RETRY', () => {
  it('fills the missing backoff fields of a stored retry document and keeps the given ones', () => {
    expect(backoffPolicyOf({})).toEqual({ backoffSeconds: DEFAULT_RETRY.backoffSeconds, factor: DEFAULT_RETRY.factor, jitterSeconds: DEFAULT_RETRY.jitterSeconds });
    expect(backoffPolicyOf({ max: 3, backoffSeconds: 5, jitterSeconds: 0 })).toEqual({ backoffSeconds: 5, factor: DEFAULT_RETRY.factor, jitterSeconds: 0 });
    expect(backoffPolicyOf({ backoffSeconds: '7', factor: 3, jitterSeconds: null })).toEqual({ backoffSeconds: 7, factor: 3, jitterSeconds: DEFAULT_RETRY.jitterSeconds });
  });

  it('is what a task without retry gets', () => {
    const def = parseTaskDefinitionOrThrow({ name: 't', schedule: { type: 'cron', expr: '0 2 * * *' }, exec: { type: 'shell', command: ['true'] } });
    expect(def.retry).toEqual({ ...DEFAULT_RETRY });
  });

  // The docs write the defaults out for readers; this keeps their literal text equal to the code's.
  it.each(['job-files.md', 'admin-api.md'])('is the default docs/%s writes out', (file) => {
    const text = readFileSync(new URL(file, docsDir), 'utf8');
    const literals = [...text.matchAll(/`(\{"max":\d+,"backoffSeconds":[^`]*\})`/g)].map((m) => JSON.parse(m[1] ?? '') as unknown);
    expect(literals.length).toBeGreaterThan(0);
    for (const literal of literals) expect(literal).toEqual({ ...DEFAULT_RETRY });
  });
});
