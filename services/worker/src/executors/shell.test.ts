import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '@ax/testing';
import { liveGroupMembers } from '../process-group.js';
import { dispatchItem } from '../testing/fixtures.js';
import { createShellExecutor } from './shell.js';
import type { ExecutionRequest } from './types.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-shell-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Alive = exists and is not a zombie (an orphan's reaper may be slow). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const executor = createShellExecutor({ outputTailBytes: 1024, killGraceMs: 1_000, env: { PATH: process.env.PATH, MY_TOKEN: 's3cret' } });

function request(command: string[], overrides: Partial<ExecutionRequest> & { timeoutSeconds?: number; shell?: boolean; env?: Record<string, string | { secretRef: string }>; cwd?: string; params?: Record<string, unknown> } = {}): ExecutionRequest {
  const item = dispatchItem({
    exec: { type: 'shell', command, shell: overrides.shell ?? false, env: overrides.env, cwd: overrides.cwd },
    timeoutSeconds: overrides.timeoutSeconds ?? 30,
    params: overrides.params ?? {},
  });
  return { item, deadlineMs: Date.now() + item.timeoutSeconds * 1000, signal: overrides.signal ?? new AbortController().signal, onSpawn: overrides.onSpawn };
}

describe('shell executor', () => {
  it('runs an argv without a shell, with templates, env, secretRef and cwd', async () => {
    const out = await executor.run(
      request(['/bin/sh', '-c', 'echo "$1 $FOO $TOKEN $AX_BIZ_DATE $(pwd)"; echo err >&2', 'x', '{{params.word}};rm -rf /'], {
        env: { FOO: 'bar', TOKEN: { secretRef: 'MY_TOKEN' } },
        cwd: dir,
        params: { word: 'hello' },
      }),
    );
    expect(out).toMatchObject({ outcome: 'SUCCESS', exitCode: 0, outputTruncated: false });
    expect(out.outputTail).toBe(`hello;rm -rf / bar s3cret 2026-12-01 ${dir}\nerr\n`);
  });

  it('runs through /bin/sh when shell: true', async () => {
    const out = await executor.run(request(['echo', 'a', '&&', 'echo', 'b'], { shell: true }));
    expect(out.outputTail).toBe('a\nb\n');
  });

  it('#18.5 under shell: true a param is one literal word: ";", $( ), backquotes, a newline or a quote in it run nothing', async () => {
    const attacks: Array<(file: string) => string> = [
      (file) => `a; touch ${file}`,
      (file) => `$(touch ${file})`,
      (file) => `\`touch ${file}\``,
      (file) => `a\ntouch ${file}`,
      (file) => `'; touch ${file}; '`,
      (file) => `" | touch ${file} & *`,
    ];
    const seen: unknown[] = [];
    const expected: unknown[] = [];
    for (const [i, attack] of attacks.entries()) {
      const file = path.join(dir, `injected-${i}`);
      const x = attack(file);
      const out = await executor.run(request(['printf', "'%s\\n'", '{{params.x}}'], { shell: true, params: { x } }));
      seen.push({ x, outcome: out.outcome, output: out.outputTail, created: existsSync(file) });
      expected.push({ x, outcome: 'SUCCESS', output: `${x}\n`, created: false });
    }
    expect(seen).toEqual(expected);
  });

  it('#18.5 under shell: true a placeholder inside quotes fails the attempt, naming the element, and runs nothing', async () => {
    const file = path.join(dir, 'quoted-ran');
    const out = await executor.run(request(['touch', file, ';', 'echo', '"{{params.x}}"'], { shell: true, params: { x: '$(id)' } }));
    expect(out).toMatchObject({ outcome: 'FAILED', exitCode: null });
    expect(out.error).toMatch(/^cannot prepare the command: exec\.command\[4\]: placeholder "\{\{params\.x\}\}" is inside double quotes; /);
    expect(existsSync(file)).toBe(false);
  });

  it('#18.5 without shell the same params stay one argv entry each, as they are', async () => {
    const file = path.join(dir, 'argv-injected');
    const values = [`a; touch ${file}`, `$(touch ${file})`, `\`touch ${file}\``, `'"*`];
    const out = await executor.run(request(['printf', '%s|', '{{params.a}}', '{{params.b}}', '{{params.c}}', '{{params.d}}'], { params: { a: values[0], b: values[1], c: values[2], d: values[3] } }));
    expect(out.outputTail).toBe(values.map((v) => `${v}|`).join(''));
    expect(existsSync(file)).toBe(false);
  });

  it('reports a failing exit code and a missing command as failed attempts, naming them', async () => {
    expect(await executor.run(request(['/bin/sh', '-c', 'exit 3']))).toMatchObject({ outcome: 'FAILED', exitCode: 3, error: 'exited with code 3' });
    const missing = await executor.run(request(['no-such-command-ax']));
    expect(missing).toMatchObject({ outcome: 'FAILED', exitCode: 127, error: 'command not found: no-such-command-ax' });
    const secret = await executor.run(request(['true'], { env: { X: { secretRef: 'NOT_SET_ANYWHERE' } } }));
    expect(secret).toMatchObject({ outcome: 'FAILED', error: "secret NOT_SET_ANYWHERE is not set in the worker's environment" });
    const cwd = await executor.run(request(['true'], { cwd: path.join(dir, 'missing') }));
    expect(cwd.outcome).toBe('FAILED');
    expect(cwd.error).toMatch(/cannot start the command/);
  });

  it('keeps a bounded output tail and marks the truncation', async () => {
    const out = await executor.run(request(['/bin/sh', '-c', 'i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); done']));
    expect(Buffer.byteLength(out.outputTail ?? '')).toBeLessThanOrEqual(1024);
    expect(out.outputTruncated).toBe(true);
    expect(out.outputTail).toMatch(/line 299\n$/);
  });

  it('R13 records the process group before the job starts', async () => {
    const marker = path.join(dir, 'started');
    const seen: Array<{ pgid: number; start: string; jobStarted: boolean }> = [];
    const out = await executor.run(
      request(['/bin/sh', '-c', `touch ${marker}`], {
        onSpawn: (pgid, start) => {
          let jobStarted = true;
          try {
            readFileSync(marker);
          } catch {
            jobStarted = false;
          }
          seen.push({ pgid, start, jobStarted });
        },
      }),
    );
    expect(out.outcome).toBe('SUCCESS');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.jobStarted).toBe(false);
    expect(seen[0]?.start).toMatch(/^\d+$/);
  });

  it('timeout kills a grandchild too and reports TIMEOUT (no process left)', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    let pgid = 0;
    // The grandchild ignores SIGTERM: only the SIGKILL of the group after the grace ends it.
    const script = `(trap '' TERM; sleep 60) & echo $! > ${pidFile}; wait`;
    const out = await executor.run(request(['/bin/sh', '-c', script], { timeoutSeconds: 1, onSpawn: (g) => (pgid = g) }));
    expect(out.outcome).toBe('TIMEOUT');
    expect(out.error).toMatch(/timed out after 1 s/);
    const grandchild = Number(readFileSync(pidFile, 'utf8').trim());
    expect(grandchild).toBeGreaterThan(0);
    expect(liveGroupMembers(pgid)).toEqual([]);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('a cancel kills the running job and reports CANCELED', async () => {
    const controller = new AbortController();
    let pgid = 0;
    const running = executor.run(request(['sleep', '30'], { signal: controller.signal, onSpawn: (g) => (pgid = g) }));
    await waitFor(() => pgid > 0 && liveGroupMembers(pgid).length > 0, { description: 'job running' });
    controller.abort('cancel');
    expect(await running).toMatchObject({ outcome: 'CANCELED' });
    expect(liveGroupMembers(pgid)).toEqual([]);
  });
});
