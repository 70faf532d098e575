// The public API of @ax/core: pure domain logic, no I/O, no clock of its own.
export type { Clock } from './clock.js';
export * from './schedule/index.js';
export * from './errors.js';
export * from './task/index.js';
export * from './state/index.js';
export * from './retry/index.js';
export * from './routing/index.js';
export * from './dag/index.js';
export * from './messages/index.js';
export * from './signature/index.js';
export * from './alerts/index.js';
export * from './net/index.js';
export * from './identity/index.js';
export * from './waiting/index.js';
export * from './text/line-diff.js';
export * from './text/value-diff.js';
