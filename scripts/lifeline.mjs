// Keeps the services of `pnpm start` (scripts/start-stack.mjs) from outliving it, however it
// ends. They run detached (own sessions, so a terminal's Ctrl-C reaches only the launcher, which
// drains them with one SIGTERM each), which also means nothing stops them when the launcher is
// killed some other way. Two guards (a closed terminal is start-stack.mjs's SIGHUP handler):
//   - watchLauncher: what launched start-stack.mjs (pnpm, and the `sh -c` it runs the script
//     through) was killed: start-stack.mjs is still alive and stops the stack itself;
//   - startWatchdog: start-stack.mjs itself was SIGKILLed (or crashed): a small detached process
//     notices (its stdin pipe from start-stack.mjs closes), sends the services their SIGTERM and
//     SIGKILLs what still runs after a grace.
// Run as `node scripts/lifeline.mjs watchdog <graceMs>`, this file is the watchdog.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const hasProc = existsSync('/proc/self/stat');

/** `{ ppid, pgid, sid, leader, state, start }` of a live or zombie process; undefined once gone. */
function processInfo(pid) {
  if (hasProc) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return undefined; // gone
    }
    // "pid (comm) state ppid pgrp session … starttime(22nd) …"; comm may contain spaces.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]), leader: Number(f[3]) === pid, start: f[19] };
  }
  // No /proc (macOS): ps, only while building the chain at start. `stat` has an "s" for a session
  // leader; `sess` is the session (an id, or on macOS a pointer: equal within a session).
  const run = spawnSync('ps', ['-o', 'ppid=,pgid=,sess=,stat=', '-p', String(pid)], { encoding: 'utf8' });
  const [ppid, pgid, sid, state] = (run.stdout ?? '').trim().split(/\s+/);
  if (run.status !== 0 || state === undefined) return undefined;
  return { state, ppid: Number(ppid), pgid: Number(pgid), sid, leader: state.includes('s'), start: undefined };
}

/** Whether the process `{ pid, start }` still runs (a zombie or a reused pid does not count). */
function isAlive({ pid, start }) {
  if (hasProc) {
    const info = processInfo(pid);
    return info !== undefined && info.start === start && info.state !== 'Z' && info.state !== 'X';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * The processes that launched this one and whose death means the user's `pnpm start` is over:
 * walking up from the parent (pnpm 12, a native binary, runs the script through `sh -c`, and
 * that shell survives a `kill -9` of pnpm: the direct parent is not enough), every ancestor of
 * our session, stopping before pid 1 and before an ancestor that leads the session from another
 * process group: the interactive shell, whose terminal closing reaches us as SIGHUP anyway, and
 * which may `exit` on purpose leaving a `pnpm start &` running. So `setsid pnpm start` keeps
 * pnpm (our group) in the chain, and a wrapper script in between is watched too.
 */
function launcherChain() {
  const self = processInfo(process.pid);
  if (self === undefined) return undefined; // neither /proc nor ps
  const chain = [];
  for (let pid = process.ppid; pid > 1; ) {
    const info = processInfo(pid);
    if (info === undefined || info.sid !== self.sid || (info.leader && info.pgid !== self.pgid)) break;
    chain.push({ pid, start: info.start });
    pid = info.ppid;
  }
  return chain;
}

/**
 * Calls `onLost(pid)` once, when a process of the launcher chain is gone (or, where the chain
 * cannot be read, when our parent is: our parent pid then changes). Polls every `intervalMs` on
 * an unref'd timer. Returns the pids watched.
 */
export function watchLauncher(onLost, intervalMs = 500) {
  const parent = process.ppid;
  const chain = launcherChain();
  const timer = setInterval(() => {
    const gone = chain ? chain.find((proc) => !isAlive(proc)) : process.ppid !== parent ? { pid: parent } : undefined;
    if (gone === undefined) return;
    clearInterval(timer);
    onLost(gone.pid);
  }, intervalMs);
  timer.unref();
  return chain ? chain.map((proc) => proc.pid) : [parent];
}

/**
 * Starts the watchdog; `watch(pid)` hands it a service, `stopping()` says the services have had
 * their SIGTERM. When this process ends, any way (its end of the watchdog's stdin closes), the
 * watchdog sends SIGTERM to the services still running, unless they had it already (a second
 * one would make them exit without draining), waits up to `graceMs` for them and SIGKILLs the
 * rest. After a normal stop nothing is left and it just exits.
 *
 * Why not the kernel's parent-death signal (PR_SET_PDEATHSIG, e.g. through `setpriv
 * --pdeathsig TERM`)? It is tied to the thread that forked the child, and when a multi-threaded
 * process like node dies, its children are handed from one dying thread to the next and get the
 * signal again at each step: two or three SIGTERMs, so no drain; and nothing SIGKILLs a service
 * that then hangs (writing its log to the launcher's broken pipe, say).
 */
export function startWatchdog({ graceMs }) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'watchdog', String(graceMs)], {
    // Own session, like the services: Ctrl-C and a closed terminal must not take it down first.
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  // Without a watchdog (it failed or was killed) the stack still runs; it only loses the backstop.
  child.on('error', () => {});
  child.stdin.on('error', () => {});
  child.unref();
  child.stdin.unref();
  const send = (line) => {
    if (child.stdin.writable) child.stdin.write(`${line}\n`);
  };
  return {
    // With its start time where there is /proc, so that a reused pid is never signalled.
    watch: (pid) => send(`${pid} ${(hasProc && processInfo(pid)?.start) || ''}`),
    stopping: () => send('stopping'),
  };
}

async function runWatchdog(graceMs) {
  const services = [];
  let terminated = false;
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line === 'stopping') {
      terminated = true;
      return;
    }
    const [pid, start] = line.split(' ');
    services.push({ pid: Number(pid), start: start || undefined });
  });
  await new Promise((resolve) => lines.once('close', resolve));
  const running = () => services.filter(isAlive);
  const signal = (name) => {
    for (const { pid } of running()) {
      try {
        process.kill(pid, name);
      } catch {
        // gone meanwhile
      }
    }
  };
  if (!terminated) signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (running().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  signal('SIGKILL');
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'watchdog') {
  await runWatchdog(Number(process.argv[3]));
}
