/**
 * Groups synchronous writes made in the same tick into one call (one SQLite transaction): at
 * thousands of jobs a second the commit, not the row, is what costs (each commit writes whole
 * WAL pages). `add` resolves once the batch holding the entry was written, so a caller that
 * awaits it still knows its row is durable before it goes on (R13: recorded before the job
 * runs; a result written before it is published).
 */
export class TickBatch<T> {
  private pending: Array<{ entry: T; resolve: () => void; reject: (error: unknown) => void }> = [];
  private scheduled = false;

  constructor(private readonly write: (entries: readonly T[]) => void) {}

  /** Queues an entry; resolves after it was written, rejects with the write's error. */
  add(entry: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ entry, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Writes what is queued now (also called by `setImmediate`). */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    try {
      this.write(batch.map((p) => p.entry));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    for (const p of batch) p.resolve();
  }
}
