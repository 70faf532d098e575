import { describe, expect, it } from 'vitest';
import { WAITING_HINTS, waitingTitle } from './waiting';

describe('waiting', () => {
  it('has a hint for every reason of the contract', () => {
    expect(Object.keys(WAITING_HINTS).sort()).toEqual(['BACKLOG_HOLD', 'BATCH_CONCURRENCY', 'DISPATCH_PAUSED', 'NO_WORKER', 'QUEUE_POSITION', 'RATE_LIMIT', 'SERIAL_BUSY', 'TEAM_LIMIT', 'UPSTREAM']);
  });

  it('titles a cell with the reason, since when and the cause', () => {
    expect(waitingTitle({ reason: 'TEAM_LIMIT', since: '2026-12-01T02:00:00.000Z', message: 'team data has 3/3 instances DISPATCHED or RUNNING (its maxRunning)' })).toBe(
      'TEAM_LIMIT since 2026-12-01T02:00:00.000Z: team data has 3/3 instances DISPATCHED or RUNNING (its maxRunning)',
    );
  });
});
