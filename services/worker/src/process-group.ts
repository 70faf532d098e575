/**
 * Process groups of jobs (R13): every shell job and plugin run leads its own group, so a
 * timeout, a cancel or a restarted worker kills the whole tree, grandchildren included.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** `/proc/<pid>/stat` fields after the command name (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return stat.slice(close + 2).split(' ');
  } catch {
    // ENOENT: no such process (or no /proc): treated as gone.
    return null;
  }
}

/**
 * The start time of a process (clock ticks since boot, `/proc/<pid>/stat` field 22) or null
 * when it does not exist. With the pid it identifies a process across pid reuse.
 */
export function processStartTime(pid: number): string | null {
  // Field 22 overall = index 19 after pid and comm (fields 3.. start at index 0).
  return statFields(pid)?.[19] ?? null;
}

/** State letter and process group of a process, or null. */
function stateAndGroup(pid: number): { state: string; pgrp: number; start: number } | null {
  const f = statFields(pid);
  if (f === null) return null;
  return { state: f[0] ?? '?', pgrp: Number(f[2]), start: Number(f[19]) };
}

/** Live (non-zombie) members of a process group, by scanning /proc. */
export function liveGroupMembers(pgid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return groupExists(pgid) ? [pgid] : [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const info = stateAndGroup(Number(entry));
    if (info !== null && info.pgrp === pgid && info.state !== 'Z') out.push(Number(entry));
  }
  return out;
}

/** True while any member of the group exists (zombies included). */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends a signal to a whole group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH') throw error;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * SIGTERM to the group, then SIGKILL once `graceMs` has passed with members still alive.
 * Resolves when no live member is left (or shortly after the SIGKILL).
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (liveGroupMembers(pgid).length === 0) return;
    await sleep(50);
  }
  signalGroup(pgid, 'SIGKILL');
  for (let i = 0; i < 40 && liveGroupMembers(pgid).length > 0; i++) await sleep(25);
}

/**
 * Whether a recorded group is still one of ours (R13): its leader exists with the recorded
 * start time, or — the leader gone — members of the group remain that started no earlier than
 * the leader did. (Linux never reuses a pid while it still names a live process group, so such
 * members belong to the recorded group.) An unrelated process that reused the pid has another
 * start time and is left alone.
 */
export function isOwnGroup(pgid: number, recordedStart: string): boolean {
  const leader = stateAndGroup(pgid);
  const start = Number(recordedStart);
  if (leader !== null && leader.state !== 'Z') return String(leader.start) === recordedStart && leader.pgrp === pgid;
  return liveGroupMembers(pgid).some((pid) => {
    const info = stateAndGroup(pid);
    return info !== null && info.start >= start;
  });
}
