/**
 * The open log streams (SSE) of one admin-api process, by token (#45, DESIGN §11 "Noisy
 * neighbours"): a stream polls the store every 400 ms for as long as it is open, so a token may
 * hold at most `maxPerToken` at once (one more is answered 429 `RATE_LIMITED`), and a stream
 * lives no longer than its token: it ends at once when the token is revoked through this process
 * (`endToken`, called by `DELETE /api/v1/tokens/{id}`), and within `tokenCheckMs` otherwise (each
 * stream reads its token's row that often: a revocation by another admin-api process, or by the
 * `AX_ADMIN_TOKEN` rotation at a start). The count is per process: behind a load balancer with
 * N processes a token may hold up to N × the limit.
 */
import { ApiError } from './errors.js';

/** Defaults of the registry. */
export const DEFAULT_LOG_STREAMS_PER_TOKEN = 10;

/** Why a stream was ended from outside. */
export type StreamEndReason = 'TOKEN_REVOKED';

/** One open stream: `end` closes it (once). */
export interface StreamHandle {
  end(reason: StreamEndReason): void;
}

export class LogStreamRegistry {
  private readonly byToken = new Map<string, Set<StreamHandle>>();

  /** @param maxPerToken streams one token may hold open at once in this process (default 10) */
  constructor(readonly maxPerToken: number = DEFAULT_LOG_STREAMS_PER_TOKEN) {}

  /**
   * Registers a stream of `tokenId`; returns the function that unregisters it.
   * @throws ApiError 429 `RATE_LIMITED` when the token already holds `maxPerToken`.
   */
  open(tokenId: string, handle: StreamHandle): () => void {
    const streams = this.byToken.get(tokenId) ?? new Set<StreamHandle>();
    if (streams.size >= this.maxPerToken) {
      throw new ApiError(
        429,
        'RATE_LIMITED',
        `this token already has ${streams.size} log streams open, the limit (AX_LOG_STREAMS_PER_TOKEN=${this.maxPerToken}); close one first`,
        { limit: 'AX_LOG_STREAMS_PER_TOKEN', max: this.maxPerToken, open: streams.size },
        { 'retry-after': '5' },
      );
    }
    streams.add(handle);
    this.byToken.set(tokenId, streams);
    return () => {
      streams.delete(handle);
      if (streams.size === 0 && this.byToken.get(tokenId) === streams) this.byToken.delete(tokenId);
    };
  }

  /** Streams `tokenId` holds open now. */
  openCount(tokenId: string): number {
    return this.byToken.get(tokenId)?.size ?? 0;
  }

  /** Ends every stream of `tokenId` (its token was revoked). */
  endToken(tokenId: string, reason: StreamEndReason): void {
    for (const handle of [...(this.byToken.get(tokenId) ?? [])]) handle.end(reason);
  }
}
