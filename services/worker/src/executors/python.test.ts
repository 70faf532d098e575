// #22 the python executor on a real interpreter: a virtualenv made here (`python3 -m venv
// --without-pip`), the script's output shipped as the job's output with secrets masked, args
// templated, and a timeout or cancel that kills the whole process group.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logItemSchema, type DispatchItem, type LogItem, type PythonExec } from '@ax/core';
import { missingRequirement, waitFor } from '@ax/testing';
import { AttemptLog, noItems } from '../logs/attempt-log.js';
import { liveGroupMembers } from '../process-group.js';
import { dispatchItem } from '../testing/fixtures.js';
import { reassemble } from '../testing/log-items.js';
import { createPythonExecutor } from './python.js';
import type { ExecutionRequest } from './types.js';

const hasVenv = spawnSync('python3', ['-c', 'import venv'], { stdio: 'ignore' }).status === 0;

const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-python-'));
const venv = path.join(dir, 'venv');
const secretsDir = path.join(dir, 'secrets');
mkdirSync(path.join(secretsDir, 'default'), { recursive: true });
writeFileSync(path.join(secretsDir, 'default', 'DB_PASSWORD'), 'py-5ecret-0123456789\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const executor = createPythonExecutor({ outputTailBytes: 4096, killGraceMs: 1_000, env: { PATH: process.env.PATH, HOME: process.env.HOME }, secretsDir });

type PythonInput = Omit<PythonExec, 'type' | 'args'> & { args?: string[] };

function item(exec: PythonInput, overrides: Partial<DispatchItem> = {}): DispatchItem {
  return dispatchItem({ exec: { type: 'python', args: [], ...exec }, ...overrides });
}

/** A request whose output goes through a real attempt log; `done()` gives the shipped streams. */
function capture(dispatch: DispatchItem, extra: Partial<ExecutionRequest> = {}): { request: ExecutionRequest; done: () => { stdout: string; stderr: string } } {
  const log = new AttemptLog(dispatch, { maxBytes: 1_000_000 }, { onPending: () => undefined, shouldStopHead: () => false });
  return {
    request: { item: dispatch, deadlineMs: Date.now() + dispatch.timeoutSeconds * 1000, signal: new AbortController().signal, output: log, ...extra },
    done: () => {
      const items = noItems();
      log.takeChunks(items);
      log.end(items);
      const parsed: LogItem[] = items.items.map((text) => logItemSchema.parse(JSON.parse(text)));
      const back = reassemble(parsed, dispatch.executionId);
      return { stdout: back.streams.stdout.toString(), stderr: back.streams.stderr.toString() };
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe.skipIf(missingRequirement(it, { name: 'python3 with venv', present: hasVenv, install: 'apt-get install python3 python3-venv' }))('#22 python executor', () => {
  beforeAll(() => {
    const made = spawnSync('python3', ['-m', 'venv', '--without-pip', venv], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`python3 -m venv failed: ${made.stderr}`);
  });

  it('runs a script in the virtualenv to SUCCESS: its interpreter, VIRTUAL_ENV, PATH, templated args, env and cwd; output captured and secrets masked', async () => {
    const script = path.join(dir, 'report.py');
    writeFileSync(
      script,
      [
        'import os, sys',
        'print("prefix", sys.prefix)',
        'print("venv", os.environ["VIRTUAL_ENV"])',
        'print("path0", os.environ["PATH"].split(":")[0])',
        'print("args", sys.argv[1:])',
        'print("cwd", os.getcwd())',
        'print("biz", os.environ["AX_BIZ_DATE"], "mode", os.environ["MODE"])',
        'print("password", os.environ["DB_PASSWORD"])',
        'print("to stderr", file=sys.stderr)',
        '',
      ].join('\n'),
    );
    const dispatch = item(
      { script, venv, args: ['--date', '{{bizDate}}', '{{params.who}}'], env: { MODE: 'full', DB_PASSWORD: { secretRef: 'DB_PASSWORD' } }, cwd: dir },
      { params: { who: 'a b; rm -rf /' } },
    );
    const c = capture(dispatch);
    const out = await executor.run(c.request);
    const streams = c.done();
    expect(out).toMatchObject({ outcome: 'SUCCESS', exitCode: 0 });
    expect(streams.stdout).toBe(
      [
        `prefix ${venv}`,
        `venv ${venv}`,
        `path0 ${venv}/bin`,
        `args ['--date', '2026-12-01', 'a b; rm -rf /']`,
        `cwd ${realpathSync(dir)}`,
        'biz 2026-12-01 mode full',
        'password ***',
        '',
      ].join('\n'),
    );
    expect(streams.stderr).toBe('to stderr\n');
    expect(out.outputTail).toContain('password ***\n');
    expect(JSON.stringify(out)).not.toContain('py-5ecret');
  });

  it('runs inline code with the default python3, and with an interpreter by absolute path', async () => {
    const inline = await executor.run(capture(item({ code: 'import sys; print("hello", sys.argv[1:])', args: ['x'] })).request);
    expect(inline).toMatchObject({ outcome: 'SUCCESS', exitCode: 0, outputTail: "hello ['x']\n" });
    const byPath = await executor.run(capture(item({ code: 'import sys; print(sys.prefix)', interpreter: path.join(venv, 'bin', 'python') })).request);
    expect(byPath).toMatchObject({ outcome: 'SUCCESS', outputTail: `${venv}\n` });
    // A script named like an option is still a file (argv: python -- <script>).
    const dash = await executor.run(capture(item({ script: '-c', cwd: dir })).request);
    expect(dash.outcome).toBe('FAILED');
    expect(dash.outputTail).toMatch(/can't open file .*-c/);
  });

  it('#48 gives the script TRACEPARENT (the execution span\'s) so its own OpenTelemetry continues the trace', async () => {
    const span = '00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01';
    const run = capture(item({ code: 'import os; print(os.environ.get("TRACEPARENT", "unset"))' }, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }), { traceparent: span });
    expect(await executor.run(run.request)).toMatchObject({ outcome: 'SUCCESS' });
    expect(run.done().stdout).toBe(`${span}\n`);
  });

  it('reports a failing script, a missing venv and a missing secret as FAILED attempts naming them', async () => {
    const failing = capture(item({ code: 'import sys; print("boom", file=sys.stderr); sys.exit(3)' }));
    expect(await executor.run(failing.request)).toMatchObject({ outcome: 'FAILED', exitCode: 3, error: 'exited with code 3' });
    expect(failing.done().stderr).toBe('boom\n');
    const noVenv = await executor.run(capture(item({ code: 'print(1)', venv: path.join(dir, 'no-such-venv') })).request);
    expect(noVenv).toMatchObject({
      outcome: 'FAILED',
      exitCode: 127,
      error: `python interpreter not found: ${dir}/no-such-venv/bin/python (exec.venv "${dir}/no-such-venv" has no bin/python)`,
    });
    const noSecret = await executor.run(capture(item({ code: 'print(1)', env: { X: { secretRef: 'NOPE' } } })).request);
    expect(noSecret).toMatchObject({ outcome: 'FAILED', exitCode: null, error: 'SECRET_MISSING: secret "NOPE" is not in the secrets folder of team "default"' });
  });

  it('prints reach the log while the job runs (unbuffered), and the group is recorded before the script starts', async () => {
    const marker = path.join(dir, 'started');
    let seenBeforeStart: boolean | undefined;
    const dispatch = item({ venv, code: `import time; open(${JSON.stringify(marker)}, "w").close(); print("first", flush=False); time.sleep(0.8); print("second")` });
    const c = capture(dispatch, {
      onSpawn: () => {
        try {
          readFileSync(marker);
          seenBeforeStart = true;
        } catch {
          seenBeforeStart = false;
        }
      },
    });
    const log = c.request.output as AttemptLog;
    const running = executor.run(c.request);
    await waitFor(() => log.bytes.stdout >= 'first\n'.length, { description: 'first line captured while running', timeoutMs: 5_000 });
    expect(log.bytes.stdout).toBe('first\n'.length);
    expect(await running).toMatchObject({ outcome: 'SUCCESS', outputTail: 'first\nsecond\n' });
    expect(seenBeforeStart).toBe(false);
  });

  it('timeout kills the script and its grandchild (which ignores SIGTERM) and reports TIMEOUT', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    let pgid = 0;
    const code = [
      'import subprocess, time',
      `child = subprocess.Popen(["/bin/sh", "-c", "trap '' TERM; sleep 60"])`,
      `open(${JSON.stringify(pidFile)}, "w").write(str(child.pid))`,
      'time.sleep(60)',
    ].join('\n');
    const out = await executor.run(capture(item({ venv, code }, { timeoutSeconds: 1 }), { onSpawn: (g) => (pgid = g) }).request);
    expect(out).toMatchObject({ outcome: 'TIMEOUT' });
    expect(out.error).toBe('timed out after 1 s; the process group was killed');
    const grandchild = Number(readFileSync(pidFile, 'utf8').trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(liveGroupMembers(pgid)).toEqual([]);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('a cancel kills the running script and reports CANCELED', async () => {
    const controller = new AbortController();
    let pgid = 0;
    const running = executor.run(capture(item({ code: 'import time; time.sleep(30)' }), { signal: controller.signal, onSpawn: (g) => (pgid = g) }).request);
    await waitFor(() => pgid > 0 && liveGroupMembers(pgid).length > 0, { description: 'script running' });
    controller.abort('cancel');
    expect(await running).toMatchObject({ outcome: 'CANCELED' });
    expect(liveGroupMembers(pgid)).toEqual([]);
  });
});
