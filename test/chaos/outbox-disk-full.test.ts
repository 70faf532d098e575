/**
 * Fault drill 10 (issue #23): the disk of a worker's outbox is full. worker-1's
 * `AX_WORKER_DATA_DIR` is a small tmpfs the drill mounts (`mount -t tmpfs`, root); under the
 * drills' load plus `shell` tasks that print output, sleep 2 s, print more (so the log outbox is
 * written while they run) and then call the sink, at a moment when worker-1 runs shell jobs, a filler file takes every free byte of the tmpfs (written until ENOSPC, topped up
 * while the fault lasts) for `FULL_MS`, then is removed. The worker's SQLite writes fail with
 * SQLITE_FULL meanwhile: a dispatch it cannot record is requeued (the broker re-routes it after
 * the ACK timeout), a result it cannot write is published from memory (`unwritten-results.ts`),
 * output it cannot write is dropped (truncated). Asserted as every drill (0 lost, 0 doubled,
 * recovery under 5× the goal, measured from the moment the disk is free again), plus: worker-1
 * never exited (the design: no SQLITE_FULL path is fatal; had it exited, the drill restarts it as
 * drills restart services, so the accounting stays meaningful, and fails), and it takes work again
 * once the disk is free. The tmpfs is unmounted whatever happens. The row is written to
 * `artifacts/results-outbox-disk-full.md`.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmdirSync, statfsSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RowDataPacket } from 'mysql2';
import { assertNoLeftoverProcesses, missingRequirement, type OutputLine } from '@ax/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ARTIFACTS_DIR, CEILING_S, expectDrillVerdict, GOAL_S, runDrill, type DrillResult } from './drill.js';
import { sleep, workerOfCall, type Service, type Stack } from './stack.js';
import { drillTable, type DrillRow } from './stats.js';

/** Size of the tmpfs under worker-1's outbox: room for the whole drill once the filler is gone. */
const TMPFS_SIZE = '64m';
/** How long the disk stays full. */
const FULL_MS = 20_000;
/** `shell` tasks of the load (on the drills' cron), each printing `SHELL_OUTPUT_LINES` lines. */
const SHELL_TASKS = 20;
const SHELL_OUTPUT_LINES = 40;
/** A shell job sleeps this long between its two halves of output: jobs are running when the disk fills. */
const SHELL_SLEEP_S = 2;
/** AX_WORKER_ID of the victim; its worker id is `stack.workerId(VICTIM)` (enrolled, `<enrollment id>.worker-1`). */
const VICTIM = 'worker-1';
const TITLE = '10 worker outbox disk full';
const GOAL = `backlog gone ≤ ${GOAL_S} s (ceiling ${CEILING_S} s); the worker does not exit`;

const rows: DrillRow[] = [];
/** Mount points still mounted (the afterAll unmounts them if a test timed out before its finally). */
const mounted = new Set<string>();

afterAll(async () => {
  for (const dir of mounted) await unmountTmpfs(dir);
  if (rows.length > 0) {
    const table = drillTable(rows);
    writeFileSync(path.join(ARTIFACTS_DIR, 'results-outbox-disk-full.md'), `# Outbox disk-full drill — ${new Date().toISOString()}\n\n${table}\n`);
    console.log(`\n${table}\n`);
  }
  assertNoLeftoverProcesses();
});

/** True when `dir` is a tmpfs mount point (/proc/mounts). */
function isTmpfsMount(dir: string): boolean {
  try {
    return readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .some((line) => {
        const [, point, type] = line.split(' ');
        return point === dir && type === 'tmpfs';
      });
  } catch {
    return false;
  }
}

function mountTmpfs(dir: string, size: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  mounted.add(dir);
  if (!isTmpfsMount(dir)) throw new Error(`mount -t tmpfs returned but ${dir} is not a tmpfs in /proc/mounts`);
}

/** Unmounts (retrying while busy, lazily as a last resort) and removes the mount point. Never throws. */
async function unmountTmpfs(dir: string): Promise<void> {
  for (let i = 0; i < 10 && isTmpfsMount(dir); i++) {
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
    } catch {
      await sleep(500); // a process of the drill still holds a file there
    }
  }
  if (isTmpfsMount(dir)) {
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    } catch (error) {
      console.error(`could not unmount ${dir}: ${String(error)}`);
    }
  }
  if (!isTmpfsMount(dir)) mounted.delete(dir);
  try {
    rmdirSync(dir);
  } catch {
    // still mounted (reported above) or already gone
  }
}

/** Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN): one tiny mount, at once unmounted. */
function canMountTmpfs(): boolean {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ax-chaos-mount-probe-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' });
    const ok = isTmpfsMount(dir);
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return ok;
  } catch {
    return false;
  } finally {
    if (dir !== undefined && !isTmpfsMount(dir)) rmdirSync(dir);
  }
}

/** Free bytes of the filesystem of `dir` (for an unprivileged writer: `bavail`). */
function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Used bytes of the filesystem of `dir`. */
function usedBytes(dir: string): number {
  const s = statfsSync(dir);
  return (s.blocks - s.bfree) * s.bsize;
}

/** Appends to `file` until the filesystem says ENOSPC (1 MiB writes, then 4 KiB ones); returns the bytes written. */
function fillUntilFull(file: string): number {
  const fd = openSync(file, 'a');
  let written = 0;
  try {
    for (const chunk of [Buffer.alloc(1_048_576, 0x61), Buffer.alloc(4_096, 0x61)]) {
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

/** A warn/error/fatal line of the victim, parsed. */
interface LoggedProblem {
  readonly atMs: number;
  readonly level: string;
  readonly msg: string;
  /** `err.code` (SQLITE_FULL …) when the line carries an error. */
  readonly code: string;
  /** Length of its `executionIds`, if any. */
  readonly executions: number;
}

/**
 * Follows worker-1 (and whatever process replaces it): its warn/error/fatal lines, read every
 * 100 ms from its kept output (each line once), and its exits; after an exit, once the disk is
 * free again, it starts worker-1 again as drills start services (at most 3 times: a crash loop is
 * then reported, not fed).
 */
class VictimWatch {
  readonly problems: LoggedProblem[] = [];
  readonly exits: Array<{ atMs: number; pid: number; exit: string; fatal: string }> = [];
  readonly restarts: Array<{ atMs: number; pid: number }> = [];
  private readonly seen = new WeakSet<OutputLine>();
  private timer: NodeJS.Timeout | undefined;
  private restarting = false;
  diskFree = false;

  constructor(
    private readonly stack: Stack,
    public current: Service,
    private readonly dataDir: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.poll(), 100);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.poll();
  }

  /** Problems logged in `[fromMs, toMs)`, counted by level, message and code. */
  summary(fromMs: number, toMs: number): string[] {
    const counts = new Map<string, number>();
    for (const p of this.problems) {
      if (p.atMs < fromMs || p.atMs >= toMs) continue;
      const key = `${p.level} ${p.msg}${p.code === '' ? '' : ` [${p.code}]`}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${n}× ${key}`);
  }

  /** Lines in `[fromMs, toMs)` whose message starts with `prefix`, and the executions they name. */
  count(prefix: string, fromMs: number, toMs: number): { lines: number; executions: number } {
    const hits = this.problems.filter((p) => p.atMs >= fromMs && p.atMs < toMs && p.msg.startsWith(prefix));
    return { lines: hits.length, executions: hits.reduce((n, p) => n + p.executions, 0) };
  }

  /** Lines naming a full disk (SQLITE_FULL / "database or disk is full" / ENOSPC) in `[fromMs, toMs)`. */
  fullDiskLines(fromMs: number, toMs: number): LoggedProblem[] {
    return this.problems.filter((p) => p.atMs >= fromMs && p.atMs < toMs && /SQLITE_FULL|disk is full|ENOSPC/i.test(`${p.code} ${p.msg}`));
  }

  private poll(): void {
    const proc = this.current;
    for (const line of proc.lines()) {
      if (this.seen.has(line)) continue;
      this.seen.add(line);
      const problem = parseProblem(line);
      if (problem !== null) this.problems.push(problem);
    }
    if (proc.exitInfo === undefined || this.restarting) return;
    if (!this.exits.some((e) => e.pid === proc.pid)) {
      const fatal = proc
        .lines()
        .map((l) => l.text)
        .filter((t) => t.includes('"level":"fatal"') || t.includes('start-up failed'))
        .slice(-1)[0];
      this.exits.push({ atMs: Date.now(), pid: proc.pid, exit: JSON.stringify(proc.exitInfo), fatal: (fatal ?? '(no fatal line)').slice(0, 400) });
    }
    if (!this.diskFree || this.restarts.length >= 3) return;
    this.restarting = true;
    void this.stack
      .startWorker(VICTIM, { AX_WORKER_DATA_DIR: this.dataDir })
      .then((next) => {
        this.restarts.push({ atMs: Date.now(), pid: next.pid });
        this.current = next;
      })
      .catch((error: unknown) => {
        this.exits.push({ atMs: Date.now(), pid: -1, exit: 'restart failed', fatal: String(error).slice(0, 400) });
      })
      .finally(() => {
        this.restarting = false;
      });
  }
}

/** Processes whose parent is `pid` (a worker's running shell jobs: the gate execs the job's `sh`). */
function childrenOf(pid: number): number {
  let n = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) n++;
    } catch {
      // exited while we looked
    }
  }
  return n;
}

function parseProblem(line: OutputLine): LoggedProblem | null {
  const text = line.text;
  if (!/"level":"(warn|error|fatal)"/.test(text)) {
    return /start-up failed|Error/.test(text) ? { atMs: line.atMs, level: line.stream, msg: text.slice(0, 160), code: '', executions: 0 } : null;
  }
  try {
    const parsed = JSON.parse(text) as { level?: string; msg?: string; err?: { code?: string; message?: string }; executionIds?: unknown };
    return {
      atMs: line.atMs,
      level: parsed.level ?? '?',
      msg: (parsed.msg ?? '').slice(0, 120),
      code: parsed.err?.code ?? (parsed.err?.message !== undefined ? parsed.err.message.slice(0, 60) : ''),
      executions: Array.isArray(parsed.executionIds) ? parsed.executionIds.length : 0,
    };
  } catch {
    return { atMs: line.atMs, level: '?', msg: text.slice(0, 120), code: '', executions: 0 };
  }
}

/** One sample of the worker's Prometheus text: the sum of the named series (every label set). */
function metricSum(text: string, name: string, labelFilter = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{') || !line.includes(labelFilter)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return sum;
}

const canMount = canMountTmpfs();

describe.skipIf(missingRequirement(it, { name: 'tmpfs mount (root with CAP_SYS_ADMIN)', present: canMount, install: 'run the suite as root (.ci/run does): `mount -t tmpfs` must be permitted' }))(
  'outbox disk-full drill (#23)',
  () => {
    it('drill 10: the disk of a worker outbox is full for 20 s under load (http and shell jobs), then freed', async () => {
      const mnt = mkdtempSync(path.join(os.tmpdir(), 'ax-chaos-outbox-'));
      const filler = path.join(mnt, 'filler');
      let watch: VictimWatch | undefined;
      let fullAt = 0;
      let freedAt = 0;
      let result: DrillResult;
      try {
        mountTmpfs(mnt, TMPFS_SIZE);
        result = await runDrill({
          title: TITLE,
          goal: GOAL,
          load: { shellTasks: SHELL_TASKS, shellOutputLines: SHELL_OUTPUT_LINES, shellSleepS: SHELL_SLEEP_S },
          workerExtraEnv: (i) => (i === 1 ? { AX_WORKER_DATA_DIR: mnt } : undefined),
          async fault(stack, log) {
            const victim = stack.workers.find((w) => w.name === stack.workerId(VICTIM));
            if (victim === undefined) throw new Error(`no ${VICTIM}`);
            const outboxFile = path.join(mnt, stack.workerId(VICTIM), 'outbox.db');
            if (!isTmpfsMount(mnt) || !existsSync(outboxFile)) throw new Error(`${outboxFile} is not on the drill's tmpfs ${mnt}`);
            watch = new VictimWatch(stack, victim, mnt);
            watch.start();
            // Strike while it runs shell jobs (in their sleep): their output and results are written while full.
            let running = 0;
            for (const deadline = Date.now() + 20_000; Date.now() < deadline && (running = childrenOf(victim.pid)) < 3; ) await sleep(50);
            const usedBefore = usedBytes(mnt);
            fullAt = Date.now();
            const filled = fillUntilFull(filler);
            const freeAtFull = freeBytes(mnt);
            log(`tmpfs full: the filler wrote ${filled} bytes until ENOSPC (${freeAtFull} bytes free); holding it ${FULL_MS / 1000} s`);
            // Whatever the worker's SQLite frees meanwhile is taken back at once.
            let toppedUp = 0;
            while (Date.now() < fullAt + FULL_MS) {
              await sleep(Math.min(250, fullAt + FULL_MS - Date.now()));
              toppedUp += fillUntilFull(filler);
            }
            const stillFree = freeBytes(mnt);
            unlinkSync(filler);
            freedAt = Date.now();
            watch.diskFree = true;
            const freeAfter = freeBytes(mnt);
            await sleep(300); // the last lines of the full period reach the watch
            const full = watch.fullDiskLines(fullAt, freedAt);
            const victimCalls = stack.sink.calls.filter((c) => c.receivedMs >= fullAt && c.receivedMs < freedAt && workerOfCall(stack, c.workerId) === stack.workerId(VICTIM));
            const shellCalls = victimCalls.filter((c) => c.taskName.startsWith('chaos_sh_')).length;
            const during = (prefix: string): string => {
              const c = watch?.count(prefix, fullAt, freedAt) ?? { lines: 0, executions: 0 };
              return `${c.lines}${c.executions > 0 ? ` (${c.executions} executions)` : ''}`;
            };
            if (full.length === 0) throw new Error(`${VICTIM} logged no SQLITE_FULL while its disk was full: the fault did not reach its outbox\n${watch.summary(fullAt, freedAt).join('\n')}`);
            return {
              recoveryFromMs: freedAt,
              from: 'disk freed',
              evidence: [
                `${VICTIM}'s AX_WORKER_DATA_DIR ${mnt} is a ${TMPFS_SIZE} tmpfs (/proc/mounts) holding ${outboxFile}; ${usedBefore} bytes used before the fault`,
                `the filler wrote ${filled} bytes until ENOSPC (then ${freeAtFull} bytes free), took ${toppedUp} more bytes back in ${FULL_MS / 1000} s (${stillFree} bytes free at the end), and was removed (${freeAfter} bytes free)`,
                `${VICTIM} ran ${running} shell jobs when the disk filled; it logged ${full.length} lines naming a full disk while it was full, the first ${((full[0]?.atMs ?? fullAt) - fullAt) / 1000} s after the fill; it made ${victimCalls.length} sink calls meanwhile (${shellCalls} by shell jobs)`,
                `while full: dispatches not recorded (requeued) ${during('could not record a dispatch')}, results published from memory ${during('could not write results to the outbox')}, ` +
                  `job output dropped ${during('log outbox: could not write job output')}, jobs not started ${during('worker error before the job could run')}`,
                `${VICTIM} (pid ${victim.pid}) running when the disk was freed: ${victim.exitInfo === undefined ? 'yes' : `no (exited ${JSON.stringify(victim.exitInfo)})`}`,
              ],
            };
          },
          async verify(stack, { log, fromMs, toMs }) {
            const w = watch as VictimWatch;
            w.stop();
            const rel = (ms: number): string => `${((ms - freedAt) / 1000).toFixed(1)} s`;
            log(`${VICTIM} warnings and errors while the disk was full:\n  ${w.summary(fullAt, freedAt).join('\n  ') || '(none)'}`);
            log(`${VICTIM} warnings and errors after the disk was freed:\n  ${w.summary(freedAt, Number.MAX_SAFE_INTEGER).join('\n  ') || '(none)'}`);
            const calls = stack.sink.calls.filter((c) => c.receivedMs >= fromMs && workerOfCall(stack, c.workerId) === stack.workerId(VICTIM));
            const phase = (a: number, b: number): string => {
              const inPhase = calls.filter((c) => c.receivedMs >= a && c.receivedMs < b);
              const shell = inPhase.filter((c) => c.taskName.startsWith('chaos_sh_')).length;
              return `${inPhase.length} (${shell} shell, ${((inPhase.length * 1000) / Math.max(1, b - a)).toFixed(1)}/s)`;
            };
            const firstAfter = calls.find((c) => c.receivedMs >= freedAt);
            log(`${VICTIM} sink calls: before the fill ${phase(fromMs, fullAt)}, disk full ${phase(fullAt, freedAt)}, after ${phase(freedAt, Date.now())}; first call after the disk was freed: ${firstAfter === undefined ? 'never' : rel(firstAfter.receivedMs)}`);
            const shellWindowCalls = stack.sink.calls.filter((c) => c.taskName.startsWith('chaos_sh_') && c.expectedMs >= fromMs && c.expectedMs < toMs).length;
            log(`shell jobs in the window: ${shellWindowCalls} sink calls (${SHELL_TASKS} tasks × ${Math.ceil((toMs - fromMs) / 2_000)} slots)`);
            const events = await stack.query<RowDataPacket>(
              `SELECT type, COUNT(*) AS n FROM event_log WHERE worker_id = ? AND at >= ? GROUP BY type ORDER BY n DESC`,
              [stack.workerId(VICTIM), new Date(fullAt - 1_000)],
            );
            log(`events of ${VICTIM} since the fill: ${events.map((e) => `${String(e.type)} ${Number(e.n)}`).join(', ')}`);
            const allEvents = await stack.query<RowDataPacket>(
              `SELECT type, COUNT(*) AS n FROM event_log WHERE at >= ? AND type IN ('ACK_TIMEOUT', 'REROUTED', 'REFUSED', 'LOST_WORKER', 'RETRY_SCHEDULED', 'FAILED', 'FENCED', 'ADOPTED', 'WORKER_RESTART') GROUP BY type`,
              [new Date(fullAt - 1_000)],
            );
            log(`events of every worker since the fill (selected types): ${allEvents.map((e) => `${String(e.type)} ${Number(e.n)}`).join(', ') || '(none)'}`);
            const failedAttempts = await stack.query<RowDataPacket>(
              `SELECT e.state AS state, LEFT(COALESCE(e.error, e.reason, ''), 80) AS error, COUNT(*) AS n FROM task_execution e
                 JOIN task_instance i ON i.id = e.instance_id
                WHERE i.expected_time >= ? AND i.expected_time < ? AND e.worker_id = ? AND e.state <> 'SUCCESS'
                GROUP BY e.state, LEFT(COALESCE(e.error, e.reason, ''), 80) ORDER BY n DESC`,
              [new Date(fromMs), new Date(toMs), stack.workerId(VICTIM)],
            );
            log(`unsuccessful attempts on ${VICTIM} in the window: ${failedAttempts.map((r) => `${Number(r.n)}× ${String(r.state)} ${String(r.error)}`).join('; ') || '(none)'}`);
            try {
              const text = await (await fetch(`${w.current.baseUrl}/metrics`)).text();
              log(
                `${VICTIM} /metrics at the end: outbox_unconfirmed ${metricSum(text, 'ax_worker_outbox_unconfirmed')}, log_outbox_bytes ${metricSum(text, 'ax_worker_log_outbox_bytes')}, ` +
                  `log_truncated_total ${metricSum(text, 'ax_worker_log_truncated_total')}, executions FAILED ${metricSum(text, 'ax_worker_executions_total', 'outcome="FAILED"')}, ` +
                  `results published ${metricSum(text, 'ax_worker_published_items_total', 'kind="result"')}`,
              );
            } catch (error) {
              log(`${VICTIM} /metrics not readable: ${String(error)}`);
            }
            if (w.exits.length > 0) log(`${VICTIM} EXITED:\n  ${w.exits.map((e) => `${rel(e.atMs)} pid ${e.pid} ${e.exit}: ${e.fatal}`).join('\n  ')}\n  restarted: ${w.restarts.map((r) => `${rel(r.atMs)} pid ${r.pid}`).join(', ') || 'no'}`);
            const final = await stack.query<RowDataPacket>(
              `SELECT state, COUNT(*) AS n FROM task_instance WHERE expected_time >= ? AND expected_time < ? GROUP BY state`,
              [new Date(fromMs), new Date(toMs)],
            );
            log(`window instances by state: ${final.map((r) => `${String(r.state)} ${Number(r.n)}`).join(', ')}`);
            expect(w.exits, `${VICTIM} must not exit on a full disk (every SQLITE_FULL path is handled)`).toEqual([]);
            expect(firstAfter, `${VICTIM} takes work again once the disk is free`).toBeDefined();
            expect(shellWindowCalls, 'shell jobs ran in the window').toBeGreaterThan(0);
            expect(final.every((r) => ['SUCCESS', 'FAILED', 'CANCELED'].includes(String(r.state))), 'every window instance is final').toBe(true);
          },
        });
      } catch (error) {
        watch?.stop();
        const verified = (error as { drillRow?: DrillRow }).drillRow;
        rows.push(verified ?? { drill: TITLE, lost: 'error', doubled: 'error', callsResumeS: 'error', backlogGoneS: 'error', goal: GOAL });
        throw error;
      } finally {
        await unmountTmpfs(mnt);
      }
      rows.push(result.row);
      expectDrillVerdict(result);
    }, 600_000);
  },
);
