// Retry timing and attempt budgets.
export { MAX_RETRY_DELAY_MS, attemptsLeft, maxAttemptsOf, retryDelayMs } from './backoff.js';
export type { BackoffPolicy } from './backoff.js';
export { DEFAULT_RETRY, backoffPolicyOf } from './defaults.js';
