import { describe, expect, it } from 'vitest';
import { cpuSecondsBetween, listeningInodes, parseProcStat, parseStatTicks } from './proc-cpu.mjs';

describe('parseStatTicks', () => {
  it('adds utime and stime, whatever the command name holds', () => {
    const stat = '4242 (node (worker) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 350 125 0 0 20 0 11 0 99 1000 200';
    expect(parseStatTicks(stat)).toBe(475);
  });
});

describe('listeningInodes', () => {
  const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
  const v4 = [
    header,
    '   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   106        0 31337 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:0CEA 0100007F:A1B2 01 00000000:00000000 00:00000000 00000000   106        0 40000 1 0000000000000000 20 4 30 10 -1',
    '   2: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0000000000000000 100 0 0 10 0',
  ].join('\n');
  it('finds the listening sockets (state 0A) of a port, not its connections', () => {
    expect([...listeningInodes([v4, header], 3306)]).toEqual(['31337']);
    expect([...listeningInodes([v4], 6379)]).toEqual(['555']);
    expect(listeningInodes([v4], 5672).size).toBe(0);
  });
});

describe('cpuSecondsBetween', () => {
  it('converts tick deltas to seconds and skips names missing before', () => {
    expect(cpuSecondsBetween({ broker: 100, mariadb: 5 }, { broker: 350, mariadb: 5, worker: 9 })).toEqual({ broker: 2.5, mariadb: 0 });
  });
});

describe('parseProcStat', () => {
  it('counts every CPU state but idle and iowait as busy', () => {
    expect(parseProcStat('cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 50 2 25 500 10 1 1 0 0 0\n')).toEqual({ busy: 161, total: 1181 });
    expect(parseProcStat('')).toEqual({ busy: 0, total: 0 });
  });
});
