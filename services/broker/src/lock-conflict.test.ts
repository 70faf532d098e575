import { describe, expect, it } from 'vitest';
import { isLockConflict } from './lock-conflict.js';

describe('isLockConflict', () => {
  it('recognises deadlocks and lock wait timeouts, also as a cause, and nothing else', () => {
    const deadlock = Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213, code: 'ER_LOCK_DEADLOCK' });
    const timeout = Object.assign(new Error('Lock wait timeout exceeded'), { errno: 1205 });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', errno: -111 });
    expect(isLockConflict(deadlock)).toBe(true);
    expect(isLockConflict(timeout)).toBe(true);
    expect(isLockConflict(new Error('dispatch: wrapped', { cause: deadlock }))).toBe(true);
    expect(isLockConflict(refused)).toBe(false);
    expect(isLockConflict(new Error('bug'))).toBe(false);
    expect(isLockConflict('text')).toBe(false);
  });
});
