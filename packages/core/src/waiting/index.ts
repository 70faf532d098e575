// Why a due instance waits (ADMIN-API.md "Waiting instances", R23).
export { LATE_AFTER_SECONDS, WAITING_REASONS, isWaitingReason } from './reasons.js';
export type { WaitingReason, WaitingVerdict } from './reasons.js';
export { classifyWaiting } from './classify.js';
export type { RunningSibling, WaitingFacts } from './classify.js';
