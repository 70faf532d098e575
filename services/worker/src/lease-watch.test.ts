import { describe, expect, it } from 'vitest';
import { LeaseWatch } from './lease-watch.js';

describe('LeaseWatch (#23: no job starts after a silence the lease may not have survived)', () => {
  it('holds while heartbeats land within the lease less its margin', () => {
    const w = new LeaseWatch(15_000, 0);
    for (let t = 5_000; t <= 60_000; t += 5_000) w.renewed(t, t + 20);
    expect(w.gapSince(1_000, 61_000)).toBeNull();
  });

  it('says no while the silence lasts longer than the lease less 2 s (a frozen process sees it at once on waking)', () => {
    const w = new LeaseWatch(15_000, 0);
    w.renewed(5_000, 5_010);
    expect(w.gapSince(6_000, 17_000)).toBeNull();
    expect(w.gapSince(6_000, 18_500)).toMatch(/no heartbeat reached Redis for 13500 ms \(lease 15000 ms\)/);
  });

  it('after the silence ends: no for jobs accepted before it, yes for jobs accepted after', () => {
    const w = new LeaseWatch(15_000, 0);
    w.renewed(5_000, 5_010);
    // frozen from 6 s to 36 s; the first heartbeat after it lands at 36.1 s
    w.renewed(36_000, 36_100);
    expect(w.gapSince(5_500, 36_200)).toMatch(/may have lapsed since it accepted the job/);
    expect(w.gapSince(36_150, 36_200)).toBeNull();
  });

  it('a heartbeat that Redis took late still counts from when it was sent', () => {
    const w = new LeaseWatch(15_000, 0);
    w.renewed(5_000, 5_010);
    w.renewed(10_000, 18_500); // slow Redis: sent at 10 s, answered at 18.5 s (> 13 s after 5 s)
    expect(w.gapSince(6_000, 18_600)).toMatch(/may have lapsed/);
    expect(w.gapSince(18_550, 18_600)).toBeNull();
    expect(w.gapSince(18_550, 23_500)).toMatch(/no heartbeat reached Redis for 13500 ms/); // counted from the send
  });
});
