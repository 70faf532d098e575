import { describe, expect, it } from 'vitest';
import { isAutoIncrementReadFailure } from './context.js';

describe('slot insert retries', () => {
  it('R2 treats MariaDB 1467 (auto-increment read failure) as worth another attempt, nothing else', () => {
    expect(isAutoIncrementReadFailure(Object.assign(new Error('Failed to read auto-increment value from storage engine'), { errno: 1467, code: 'ER_AUTOINC_READ_FAILED' }))).toBe(true);
    expect(isAutoIncrementReadFailure(Object.assign(new Error('Duplicate entry'), { errno: 1062 }))).toBe(false);
    expect(isAutoIncrementReadFailure(null)).toBe(false);
  });
});
