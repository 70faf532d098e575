/**
 * Coalesces the `<ns>.events` messages that arrive together (up to the consumer's prefetch)
 * into one transaction per kind (R10 on the broker side): the workers already batch the items
 * of one tick into one message, and under load many such messages wait in the queue at once.
 * Items of the same worker (and origin) are merged into one message, so the set-based writes
 * see them together.
 *
 * One transaction per kind is in flight at a time: what arrives meanwhile waits and forms the
 * next batch (group commit). Under load the batches grow by themselves, and the per-statement
 * and per-commit costs spread over more items; when idle a message is applied at once.
 *
 * Each submitted message resolves when the transaction holding it committed, or rejects with
 * its error. A retryable error (MySQL away, deadlock) rejects the whole batch (each message is
 * requeued); any other error re-applies the batch's messages one by one, so that only the
 * message that really fails is dead-lettered. A transaction timeout is re-applied one by one
 * too: it is most often one row locked by a transaction gone astray, and the batch locks all
 * its rows first, so a requeued batch would come back together and stay stuck together behind
 * that one row. Two single timeouts in a row mean the store itself hangs: the rest of the batch
 * is then requeued untried (each attempt would cost a whole timeout).
 */
import type { AckMessage, RefusalMessage, ResultMessage } from '@ax/core';
import { isRetryableError } from '@ax/kit';
import { TransactionTimeoutError } from '@ax/store';

/**
 * The kinds applied in batches, each with the validated RabbitMQ user that sent it (`sender`,
 * R24: the items are attributed by it when applied, attribution.ts).
 */
export type BatchedMessage = (AckMessage | RefusalMessage | ResultMessage) & { readonly sender?: string | undefined };

/** Items per transaction at most (a batch stops growing past this). */
const MAX_ITEMS_PER_BATCH = 2_000;

interface Pending {
  readonly message: BatchedMessage;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Merges messages of one kind from the same worker, origin and sender (items in arrival order). */
export function mergeMessages<M extends BatchedMessage>(messages: readonly M[]): M[] {
  const byKey = new Map<string, M>();
  for (const m of messages) {
    const origin = m.kind === 'result' ? (m.origin ?? 'worker') : '';
    const key = JSON.stringify([m.workerId, origin, m.sender ?? null]);
    const seen = byKey.get(key);
    byKey.set(key, seen === undefined ? m : { ...seen, items: [...seen.items, ...m.items] });
  }
  return [...byKey.values()];
}

export class EventBatcher {
  readonly #pending = new Map<BatchedMessage['kind'], Pending[]>();
  readonly #scheduled = new Set<BatchedMessage['kind']>();
  readonly #inFlight = new Set<BatchedMessage['kind']>();

  /** `apply` runs the merged messages of one batch in one transaction. */
  constructor(private readonly apply: (messages: readonly BatchedMessage[]) => Promise<void>) {}

  /** Resolves once the transaction holding `message` committed. */
  submit(message: BatchedMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.#pending.get(message.kind) ?? [];
      list.push({ message, resolve, reject });
      this.#pending.set(message.kind, list);
      this.#schedule(message.kind);
    });
  }

  #schedule(kind: BatchedMessage['kind']): void {
    if (this.#scheduled.has(kind) || this.#inFlight.has(kind)) return;
    this.#scheduled.add(kind);
    setImmediate(() => {
      this.#scheduled.delete(kind);
      void this.#flush(kind);
    });
  }

  async #flush(kind: BatchedMessage['kind']): Promise<void> {
    const list = this.#pending.get(kind) ?? [];
    let items = 0;
    let take = 0;
    while (take < list.length && (take === 0 || items + (list[take] as Pending).message.items.length <= MAX_ITEMS_PER_BATCH)) {
      items += (list[take] as Pending).message.items.length;
      take += 1;
    }
    const batch = list.splice(0, take);
    if (batch.length === 0) return;
    this.#inFlight.add(kind);
    try {
      await this.#applyBatch(batch);
    } finally {
      this.#inFlight.delete(kind);
      if (list.length > 0) this.#schedule(kind);
    }
  }

  async #applyBatch(batch: readonly Pending[]): Promise<void> {
    try {
      await this.apply(mergeMessages(batch.map((p) => p.message)));
      for (const p of batch) p.resolve();
    } catch (error) {
      const timedOut = error instanceof TransactionTimeoutError;
      if (batch.length === 1 || (isRetryableError(error) && !timedOut)) {
        for (const p of batch) p.reject(error);
        return;
      }
      // Isolate the message that fails: the others still apply.
      let timeoutsInARow = 0;
      for (const p of batch) {
        if (timeoutsInARow >= 2) {
          p.reject(error);
          continue;
        }
        try {
          await this.apply([p.message]);
          timeoutsInARow = 0;
          p.resolve();
        } catch (single) {
          timeoutsInARow = single instanceof TransactionTimeoutError ? timeoutsInARow + 1 : 0;
          p.reject(single);
        }
      }
    }
  }
}
