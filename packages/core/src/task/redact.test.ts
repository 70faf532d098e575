import { describe, expect, it } from 'vitest';
import { parseTaskDefinition, type TaskDefinition } from './definition.js';
import { redactTaskSecrets } from './redact.js';

function def(exec: unknown): TaskDefinition {
  const result = parseTaskDefinition({ name: 'a', schedule: { type: 'none' }, exec });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.value;
}

describe('redactTaskSecrets', () => {
  it('hides literal env values and shows secret references', () => {
    const original = def({ type: 'shell', command: ['x'], env: { PASSWORD: 'hunter2', TOKEN: { secretRef: 'API_TOKEN' } } });
    const redacted = redactTaskSecrets(original);
    expect(redacted.exec).toEqual({ type: 'shell', command: ['x'], shell: false, env: { PASSWORD: '***', TOKEN: { secretRef: 'API_TOKEN' } } });
    expect(JSON.stringify(redacted)).not.toContain('hunter2');
    expect(original.exec).toMatchObject({ env: { PASSWORD: 'hunter2' } });
  });

  it('hides literal header values', () => {
    const redacted = redactTaskSecrets(def({ type: 'http', url: 'http://a', headers: { Authorization: 'Bearer s3cret', 'X-Key': { secretRef: 'K' } } }));
    expect(redacted.exec).toMatchObject({ headers: { Authorization: '***', 'X-Key': { secretRef: 'K' } } });
    expect(JSON.stringify(redacted)).not.toContain('s3cret');
  });

  it('keeps other fields, including extra resource fields, and returns a new object', () => {
    const resource = { ...def({ type: 'plugin', name: 'p', config: { a: 1 } }), version: 7 };
    const redacted = redactTaskSecrets(resource);
    expect(redacted).toEqual(resource);
    expect(redacted).not.toBe(resource);
  });
});
