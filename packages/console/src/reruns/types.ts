/**
 * Rerun and backfill batches as `GET /api/v1/reruns` and `/reruns/{batchId}` answer them
 * (ADMIN-API.md, with the extensions), from @ax/api-types (generated: not written here).
 */
import type * as Api from '@ax/api-types';

export type RerunBatch = Api.RerunBatch;

export type BatchMode = RerunBatch['mode'];

/** `running` while an instance is not final; `canceled` once canceled (its running ones may still finish); else `done`. */
export type BatchState = RerunBatch['state'];

/** `POST /api/v1/reruns` without `dryRun`: 202. */
export type RerunStarted = Api.RerunStarted;
