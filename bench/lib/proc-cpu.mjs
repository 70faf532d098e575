/**
 * CPU time of processes from /proc (Linux): who used the machine's two cores during a scenario —
 * ax's services, the bench process (its HTTP sink), and the servers MariaDB, RabbitMQ and Redis
 * (found by the port they listen on). The servers are shared: their figures include any other
 * client's work at the same time.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** utime + stime (clock ticks) from the text of /proc/<pid>/stat. */
export function parseStatTicks(stat) {
  // "pid (comm) state ppid …": comm may hold spaces and parentheses; fields after it are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime (14th field), stime (15th)
}

/** Socket inodes listening on `port` (IPv4 and IPv6) from the text of /proc/net/tcp{,6}. */
export function listeningInodes(tcpTables, port) {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set();
  for (const table of tcpTables) {
    for (const line of table.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const [, localPort] = cols[1].split(':');
      if (localPort === hexPort && cols[3] === '0A') inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** Seconds of CPU per name between two snapshots `{ name: ticks }`, with the ticks per second. */
export function cpuSecondsBetween(before, after, ticksPerSecond = 100) {
  const out = {};
  for (const [name, t] of Object.entries(after)) {
    if (before[name] === undefined) continue;
    out[name] = Math.round(((t - before[name]) / ticksPerSecond) * 100) / 100;
  }
  return out;
}

const readOr = (file, fallback) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback; // the process or table is gone, or this is not Linux
  }
};

/** The pid listening on a local TCP port, or null. */
export function pidListeningOn(port) {
  const inodes = listeningInodes([readOr('/proc/net/tcp', ''), readOr('/proc/net/tcp6', '')], port);
  if (inodes.size === 0) return null;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds;
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link;
      try {
        link = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1])) return Number(entry);
    }
  }
  return null;
}

/** Ticks used so far by each named group of pids: `{ name: ticks }` (dead pids count 0). */
export function cpuTicks(groups) {
  const out = {};
  for (const [name, pids] of Object.entries(groups)) {
    let ticks = 0;
    for (const pid of pids) {
      const stat = readOr(`/proc/${pid}/stat`, null);
      if (stat !== null) ticks += parseStatTicks(stat);
    }
    out[name] = ticks;
  }
  return out;
}

/**
 * The pid groups of the servers found now: RabbitMQ 5672, Redis 6379, and MariaDB on
 * `mariadbPort` (the shared 3306 unless a round runs on a private server).
 */
export function serverPids({ mariadbPort = 3306 } = {}) {
  const groups = {};
  for (const [name, port] of [['mariadb', mariadbPort], ['rabbitmq', 5672], ['redis', 6379]]) {
    const pid = pidListeningOn(port);
    if (pid !== null) groups[name] = [pid];
  }
  return groups;
}

/** `{ busy, total }` ticks of all CPUs from the text of /proc/stat (busy = all but idle and iowait). */
export function parseProcStat(text) {
  const cpu = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!cpu) return { busy: 0, total: 0 };
  const v = cpu.trim().split(/\s+/).slice(1, 9).map(Number); // user nice system idle iowait irq softirq steal
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - v[3] - v[4], total };
}

/** Ticks of the named groups plus `machine` (all CPUs busy, every process of every user). */
export function cpuSnapshot(groups) {
  return { ...cpuTicks(groups), machine: parseProcStat(readOr('/proc/stat', '')).busy };
}
