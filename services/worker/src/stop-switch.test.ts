import { describe, expect, it } from 'vitest';
import { StopSwitch, type StopSignal } from './stop-switch.js';

describe('StopSwitch', () => {
  it('starts unfired and fires once, with its first reason', () => {
    const s = new StopSwitch();
    expect([s.aborted, s.reason]).toEqual([false, undefined]);
    s.abort('cancel');
    s.abort('shutdown');
    expect([s.aborted, s.reason]).toEqual([true, 'cancel']);
  });

  it('calls each listener once, in order, and not after it was removed', () => {
    const s = new StopSwitch();
    const calls: string[] = [];
    const a = (): void => void calls.push('a');
    const b = (): void => void calls.push('b');
    const c = (): void => void calls.push('c');
    s.addEventListener('abort', a, { once: true });
    s.addEventListener('abort', b);
    s.addEventListener('abort', c);
    s.removeEventListener('abort', b);
    s.abort('cancel');
    s.abort('cancel');
    expect(calls).toEqual(['a', 'c']);
  });

  it('does not keep listeners added after it fired (callers check `aborted` first)', () => {
    const s = new StopSwitch();
    s.abort('shutdown');
    let called = false;
    s.addEventListener('abort', () => (called = true));
    s.abort('shutdown');
    expect(called).toBe(false);
  });

  it('accepts a real AbortSignal where a StopSignal is expected', () => {
    const controller = new AbortController();
    const signal: StopSignal = controller.signal;
    let reason: unknown;
    signal.addEventListener('abort', () => (reason = signal.reason), { once: true });
    controller.abort('cancel');
    expect(reason).toBe('cancel');
  });
});
