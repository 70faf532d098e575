/**
 * Time as the core sees it: always passed in. Services use the system clock (from @ax/kit);
 * tests pass a manual one (from @ax/testing), so nothing in the core sleeps or reads Date.now().
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (UTC). */
  nowMs(): number;
}
