// The public API of @ax/core: pure domain logic, no I/O, no clock of its own.
export type { Clock } from './clock.js';
export * from './schedule/index.js';
