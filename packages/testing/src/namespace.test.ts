import { describe, expect, it } from 'vitest';
import { loadConfig, axConfigFields, pickFields } from '@ax/kit';
import { uniqueNamespace } from './namespace.js';

describe('uniqueNamespace', () => {
  it('makes distinct names valid as AX_NAMESPACE', () => {
    const names = Array.from({ length: 200 }, () => uniqueNamespace());
    expect(new Set(names).size).toBe(names.length);
    for (const ns of names.slice(0, 5)) {
      expect(ns).toMatch(/^axt_[0-9a-f]{8}$/);
      expect(loadConfig(pickFields(axConfigFields, ['namespace']), { AX_NAMESPACE: ns }).namespace).toBe(ns);
    }
    expect(uniqueNamespace('sched')).toMatch(/^sched_[0-9a-f]{8}$/);
    expect(() => uniqueNamespace('Bad:Prefix')).toThrow(/invalid prefix/);
  });
});
