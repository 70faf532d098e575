// What a worker writes to its own log per job (#24): at info one line, "job ended", that says
// what ran, how it ended and how long it took; "job started" only at debug (a second stdout
// write per job cost ~5 % of a busy worker's CPU).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type LogLevel } from '@ax/kit';
import { uniqueNamespace, waitFor } from '@ax/testing';
import { dispatchItem } from './testing/fixtures.js';
import { startDriver, startTestWorker, type Driver } from './testing/harness.js';

const namespace = uniqueNamespace('axjl');
let driver: Driver;

beforeAll(async () => {
  driver = await startDriver(namespace);
});
afterAll(async () => {
  await driver.close();
});

/** Runs one `echo` job on a worker logging at `level`; the lines it wrote about that job. */
async function linesOfOneJob(workerId: string, level: LogLevel): Promise<Array<Record<string, unknown>>> {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ service: 'worker', level, destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  const w = await startTestWorker({ driver, workerId, logger });
  try {
    const item = dispatchItem({ exec: { type: 'shell', command: ['/bin/sh', '-c', 'echo hi'], shell: false } });
    await driver.dispatch(workerId, [item]);
    await waitFor(() => driver.resultOf(item.executionId), { description: 'the result' });
    await waitFor(() => lines.some((l) => l.executionId === item.executionId && l.msg === 'job ended'), { description: 'the job ended line' });
    return lines.filter((l) => l.executionId === item.executionId);
  } finally {
    await w.stop();
  }
}

describe('the worker log per job', () => {
  it('at info writes one line per job: job ended, with exec, attempt, outcome, exit code and duration', async () => {
    const lines = await linesOfOneJob('w-jl-info', 'info');
    expect(lines.map((l) => l.msg)).toEqual(['job ended']);
    expect(lines[0]).toMatchObject({ level: 'info', exec: 'shell', attempt: 1, outcome: 'SUCCESS', exitCode: 0 });
    expect(lines[0]!.durationMs).toEqual(expect.any(Number));
    expect(lines[0]!.taskName).toEqual(expect.any(String));
  });
  it('at debug also writes job started', async () => {
    const lines = await linesOfOneJob('w-jl-debug', 'debug');
    expect(lines.filter((l) => l.msg === 'job started' || l.msg === 'job ended').map((l) => l.msg)).toEqual(['job started', 'job ended']);
  });
});
