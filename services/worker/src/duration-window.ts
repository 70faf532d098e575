/** Run times of the last five minutes, for the registry's `avgDurationMs5m` (routing score, §4). */
const WINDOW_MS = 300_000;

export class DurationWindow {
  private readonly entries: Array<{ endedAtMs: number; durationMs: number }> = [];

  constructor(private readonly windowMs = WINDOW_MS) {}

  add(endedAtMs: number, durationMs: number): void {
    this.entries.push({ endedAtMs, durationMs });
    this.trim(endedAtMs);
  }

  /** Average duration of the runs that ended within the window before `nowMs`; 0 when none. */
  average(nowMs: number): number {
    this.trim(nowMs);
    if (this.entries.length === 0) return 0;
    return Math.round(this.entries.reduce((sum, e) => sum + e.durationMs, 0) / this.entries.length);
  }

  private trim(nowMs: number): void {
    while (this.entries.length > 0 && (this.entries[0]?.endedAtMs ?? nowMs) < nowMs - this.windowMs) this.entries.shift();
  }
}
