import { describe, expect, it } from 'vitest';
import { WorkerPresence, type PresenceReading } from './worker-presence.js';

const SILENCE_MS = 7_500;
const reading = (consumers: number | null, heartbeatAt: string): ReadonlyMap<string, PresenceReading> => new Map([['w1', { consumers, heartbeatAt }]]);

describe('R14 worker presence (the fast lost-worker signal)', () => {
  it('R14 declares a worker gone once its consumer is missing twice in a row AND no heartbeat came for the silence', () => {
    const p = new WorkerPresence(SILENCE_MS);
    expect(p.observe(0, reading(1, 'h1'))).toEqual(new Set());
    expect(p.observe(4_000, reading(0, 'h1'))).toEqual(new Set()); // killed: the consumer is gone
    expect(p.observe(5_000, reading(0, 'h1'))).toEqual(new Set()); // two readings, but 5 s < 7.5 s
    expect(p.observe(7_000, reading(0, 'h1'))).toEqual(new Set());
    expect(p.observe(7_500, reading(0, 'h1'))).toEqual(new Set(['w1'])); // 7.5 s since the last heartbeat
  });

  it('R14 one reading without a consumer is not enough, however old the heartbeat', () => {
    const p = new WorkerPresence(SILENCE_MS);
    p.observe(0, reading(1, 'h1'));
    expect(p.observe(20_000, reading(0, 'h1'))).toEqual(new Set());
    expect(p.observe(21_000, reading(1, 'h1'))).toEqual(new Set());
    expect(p.observe(22_000, reading(0, 'h1'))).toEqual(new Set());
  });

  it('R14 a worker that keeps heartbeating while its AMQP link is down is never gone', () => {
    const p = new WorkerPresence(SILENCE_MS);
    let gone = 0;
    // Heartbeats every 5 s, seen up to a sweep (1 s) late: 6 s between changes at worst.
    for (let t = 0; t <= 120_000; t += 1_000) gone += p.observe(t, reading(0, `h${Math.floor((t - 1_000) / 5_000)}`)).size;
    expect(gone).toBe(0);
  });

  it('R14 a reading it cannot trust (queue not visible, no link) decides nothing', () => {
    const p = new WorkerPresence(SILENCE_MS);
    p.observe(0, reading(0, 'h1'));
    expect(p.observe(10_000, reading(null, 'h1'))).toEqual(new Set());
    // What was counted before the unclear reading still counts: the next clear one decides.
    expect(p.observe(11_000, reading(0, 'h1'))).toEqual(new Set(['w1']));
  });

  it('R14 a broker that just started waits a full silence: first sight counts as a heartbeat', () => {
    const p = new WorkerPresence(SILENCE_MS);
    expect(p.observe(0, reading(0, 'h1'))).toEqual(new Set());
    expect(p.observe(1_000, reading(0, 'h1'))).toEqual(new Set());
    expect(p.observe(7_500, reading(0, 'h1'))).toEqual(new Set(['w1']));
  });

  it('R14 reset() forgets what was seen (the broker lost its own link)', () => {
    const p = new WorkerPresence(SILENCE_MS);
    p.observe(0, reading(0, 'h1'));
    p.observe(1_000, reading(0, 'h1'));
    p.reset();
    expect(p.observe(8_000, reading(0, 'h1'))).toEqual(new Set());
    expect(p.observe(9_000, reading(0, 'h1'))).toEqual(new Set());
  });

  it('forgets workers whose registry entry expired', () => {
    const p = new WorkerPresence(SILENCE_MS);
    p.observe(0, reading(0, 'h1'));
    p.observe(1_000, new Map());
    expect(p.observe(2_000, reading(0, 'h1'))).toEqual(new Set());
    expect(p.observe(3_000, reading(0, 'h1'))).toEqual(new Set());
  });
});
