/**
 * The real clock. Structurally identical to `Clock` of `@ax/core` (`{ nowMs(): number }`), so it
 * can be passed wherever the core asks for one; tests pass `ManualClock` from `@ax/testing`.
 */
export const systemClock: { readonly nowMs: () => number } = Object.freeze({
  nowMs: (): number => Date.now(),
});
