/**
 * Issue #23: a dead letter the `dead_letter` table refuses for good (not a store outage) is
 * handled once — stored without its body, or parked in `<ns>.dead.parked` — never looped.
 */
import { DEAD_REASON_HEADER, DEAD_SOURCE_HEADER, PARKED_REASON_HEADER } from '@ax/bus';
import { parseMessage } from '@ax/core';
import type { RowDataPacket } from 'mysql2';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import { startBrokerHarness, type BrokerHarness } from './test-support.js';

function parseReason(body: string): string {
  const parsed = parseMessage(Buffer.from(body));
  if (parsed.ok) throw new Error(`${body} parses`);
  return parsed.reason;
}

describe('dead letters the table refuses (#23)', () => {
  let h: BrokerHarness;

  beforeAll(async () => {
    h = await startBrokerHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  const rows = async (): Promise<RowDataPacket[]> => (await h.db.pool.query<RowDataPacket[]>('SELECT source_queue, reason, payload, headers FROM dead_letter ORDER BY id'))[0];

  it('#23 stores a dead letter whose body the table refuses once, without body, with its original reason and source', async () => {
    await h.db.pool.query(`ALTER TABLE dead_letter ADD CONSTRAINT ax_test_refuse CHECK (payload IS NULL OR payload NOT LIKE 'refuse-me%')`);
    try {
      await h.peerBus.publish(h.peerBus.topology.eventsExchange, 'reply', Buffer.from('refuse-me: not json'));
      const stored = await waitFor(async () => {
        const r = await rows();
        return r.length > 0 ? r : null;
      }, { description: 'the dead letter stored without its body' });
      await sleep(500); // a loop would store it again meanwhile
      expect(await rows()).toHaveLength(1);
      const row = stored[0]!;
      expect(row.payload).toBeNull();
      expect(row.source_queue).toBe(h.bus.topology.eventsQueue);
      expect(row.reason).toBe(parseReason('refuse-me: not json'));
      const headers = (typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers) as Record<string, unknown>;
      expect(headers[DEAD_REASON_HEADER]).toBe(row.reason);
      expect(String(headers['x-ax-not-stored'])).toContain('ax_test_refuse');
      expect(await h.amqp.channel.get(h.bus.topology.parkedQueue, { noAck: true })).toBe(false);
    } finally {
      await h.db.pool.query('ALTER TABLE dead_letter DROP CONSTRAINT ax_test_refuse');
      await h.db.pool.query('DELETE FROM dead_letter');
    }
  });

  it('#23 parks a dead letter the table cannot take at all in <ns>.dead.parked with its original headers, once', async () => {
    await h.db.pool.query('RENAME TABLE dead_letter TO dead_letter_away');
    try {
      await h.peerBus.publish(h.peerBus.topology.eventsExchange, 'reply', Buffer.from('park me: not json'));
      const parked = await waitFor(() => h.amqp.channel.get(h.bus.topology.parkedQueue, { noAck: true }), { description: 'the parked dead letter' });
      expect(parked.content.toString()).toBe('park me: not json');
      const headers = parked.properties.headers as Record<string, unknown>;
      expect(headers[DEAD_REASON_HEADER]).toBe(parseReason('park me: not json'));
      expect(headers[DEAD_SOURCE_HEADER]).toBe(h.bus.topology.eventsQueue);
      expect(String(headers[PARKED_REASON_HEADER])).toContain('dead_letter');
      await sleep(500);
      expect(await h.amqp.channel.get(h.bus.topology.parkedQueue, { noAck: true })).toBe(false);
      expect((await h.bus.queueDepth(h.bus.topology.deadQueue))?.messageCount).toBe(0);
    } finally {
      await h.db.pool.query('RENAME TABLE dead_letter_away TO dead_letter');
    }
  });
});
