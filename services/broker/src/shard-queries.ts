/**
 * The shard queries moved to `@ax/store` (queries/shard-executions.ts, #46). This re-export
 * keeps dispatch.ts's import unchanged while it is being reworked; drop it when dispatch.ts
 * imports `restartShardAckClocks` from `@ax/store`.
 */
export { restartShardAckClocks } from '@ax/store';
