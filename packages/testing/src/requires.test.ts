import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './processes.js';
import { MissingRequirementError, missingRequirement, type Requirement } from './requires.js';

/** A recorder for what the helper registers and prints. */
function recorder() {
  const tests: { name: string; fn: () => void }[] = [];
  const warnings: string[] = [];
  return { tests, warnings, register: (name: string, fn: () => void) => void tests.push({ name, fn }), warn: (line: string) => void warnings.push(line) };
}

const missing = (name: string): Requirement => ({ name, present: false, install: `apt-get install ${name}` });

describe('missingRequirement', () => {
  it('is false for a present requirement, registering and printing nothing, in CI too', () => {
    const r = recorder();
    for (const env of [{}, { CI: 'true' }]) {
      expect(missingRequirement(r.register, { name: 'sh', present: true, install: 'apt-get install dash' }, { env, warn: r.warn })).toBe(false);
    }
    expect(r.tests).toEqual([]);
    expect(r.warnings).toEqual([]);
  });

  it('outside CI: true (skip), one stderr line naming it and how to get it, printed once per name', () => {
    const r = recorder();
    for (const env of [{}, { CI: 'false' }, { CI: '' }]) {
      expect(missingRequirement(r.register, missing('prog-a'), { env, warn: r.warn })).toBe(true);
    }
    expect(missingRequirement(r.register, missing('prog-b'), { env: {}, warn: r.warn })).toBe(true);
    expect(r.tests).toEqual([]);
    expect(r.warnings).toEqual([
      'prog-a is missing: the tests that need it are skipped (apt-get install prog-a; under CI=true they fail)',
      'prog-b is missing: the tests that need it are skipped (apt-get install prog-b; under CI=true they fail)',
    ]);
  });

  it('under CI=true: true (skip what needs it) and one failing test, once per name, whose one-line error says how CI installs it', () => {
    const r = recorder();
    for (let i = 0; i < 2; i += 1) expect(missingRequirement(r.register, missing('prog-c'), { env: { CI: 'true' }, warn: r.warn })).toBe(true);
    expect(r.warnings).toEqual([]);
    expect(r.tests.map((t) => t.name)).toEqual(['requires prog-c']);
    let thrown: unknown;
    try {
      r.tests[0]?.fn();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MissingRequirementError);
    const message = (thrown as Error).message;
    expect(message).toBe('prog-c is missing, and under CI=true a missing program fails instead of skipping: CI installs it with `apt-get install prog-c`');
    expect(message).not.toContain('\n');
  });
});

// The real thing: a test file using the helper for a program that does not exist, run by vitest
// itself with and without CI=true, then summarised by the script CI ends with.
describe('a test file guarded by missingRequirement, run by vitest', () => {
  const root = repoRoot();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ax-requires-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the fixture; resolves with the exit code, stderr and the JSON report. */
  function runFixture(ci: boolean): Promise<{ code: number; stderr: string; reportFile: string; report: Report }> {
    const work = path.join(dir, ci ? 'ci' : 'local');
    // Only `vitest` is linked in: vite's cache (node_modules/.vite) stays in the temp dir.
    mkdirSync(path.join(work, 'node_modules'), { recursive: true });
    symlinkSync(path.join(root, 'node_modules', 'vitest'), path.join(work, 'node_modules', 'vitest'));
    const helper = fileURLToPath(new URL('./requires.ts', import.meta.url));
    writeFileSync(
      path.join(work, 'needs.test.ts'),
      [
        "import { describe, expect, it } from 'vitest';",
        `import { missingRequirement } from ${JSON.stringify(helper)};`,
        "const needs = { name: 'ax-no-such-program', present: false, install: 'apt-get install ax-no-such-program' };",
        "describe.skipIf(missingRequirement(it, needs))('needs it', () => { it('uses it', () => expect(1).toBe(2)); });",
        "it.skipIf(missingRequirement(it, needs))('uses it too', () => expect(1).toBe(2));",
        "it('runs anyway', () => expect(1).toBe(1));",
        '',
      ].join('\n'),
    );
    const reportFile = path.join(work, 'report.json');
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...(ci ? { CI: 'true' } : {}) };
    const args = [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', work, '--reporter=json', `--outputFile=${reportFile}`];
    return new Promise((resolve, reject) => {
      execFile(process.execPath, args, { cwd: work, env, timeout: 60_000 }, (error, _stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') return reject(new Error(`vitest did not run: ${error.message}`, { cause: error }));
        try {
          resolve({ code: error === null ? 0 : Number(error.code), stderr, reportFile, report: JSON.parse(readFileSync(reportFile, 'utf8')) as Report });
        } catch (readError) {
          reject(readError instanceof Error ? readError : new Error(String(readError)));
        }
      });
    });
  }

  /** `node scripts/test-summary.mjs <report> [label]` in the fixture's directory. */
  function summary(reportFile: string, label?: string): Promise<{ code: number; lines: string[] }> {
    const args = [path.join(root, 'scripts', 'test-summary.mjs'), reportFile, ...(label === undefined ? [] : [label])];
    return new Promise((resolve) => {
      execFile(process.execPath, args, { cwd: path.dirname(reportFile), timeout: 10_000 }, (error, stdout) => {
        resolve({ code: error === null ? 0 : Number(error.code), lines: stdout.trimEnd().split('\n') });
      });
    });
  }

  const byTitle = (report: Report) => Object.fromEntries(report.testResults.flatMap((f) => f.assertionResults).map((t) => [[...t.ancestorTitles, t.title].join(' > '), t]));

  it('under CI=true the run exits non-zero, the failed test names the program and CI counts it as failed', async () => {
    const run = await runFixture(true);
    expect(run.code).toBe(1);
    expect(run.report.numFailedTests).toBe(1);
    const tests = byTitle(run.report);
    expect(tests['needs it > uses it']?.status).toBe('skipped');
    expect(tests['uses it too']?.status).toBe('skipped');
    expect(tests['runs anyway']?.status).toBe('passed');
    const failure = tests['requires ax-no-such-program'];
    expect(failure?.status).toBe('failed');
    expect(failure?.failureMessages[0]).toContain('ax-no-such-program is missing, and under CI=true a missing program fails instead of skipping: CI installs it with `apt-get install ax-no-such-program`');
    const { code, lines } = await summary(run.reportFile);
    expect(code).toBe(1);
    expect(lines).toHaveLength(4);
    expect(lines.slice(0, 2)).toEqual(['vitest skipped: needs.test.ts > needs it > uses it', 'vitest skipped: needs.test.ts > uses it too']);
    // the failed test by name with the first line of its failure, so a CI log's tail says what failed
    expect(lines[2]).toMatch(/^vitest failed: needs\.test\.ts > requires ax-no-such-program: .*ax-no-such-program is missing/);
    expect(lines[3]).toBe('vitest: 1 passed, 1 failed, 2 skipped');
  }, 60_000);

  it('outside CI the run passes, says once on stderr what was skipped, and the summary lists the skipped tests', async () => {
    const run = await runFixture(false);
    expect(run.code).toBe(0);
    expect(run.report.numFailedTests).toBe(0);
    expect(run.report.numPendingTests).toBe(2);
    expect(run.stderr.split('ax-no-such-program is missing: the tests that need it are skipped').length - 1).toBe(1);
    expect(await summary(run.reportFile, 'node24')).toEqual({
      code: 0,
      lines: ['node24 skipped: needs.test.ts > needs it > uses it', 'node24 skipped: needs.test.ts > uses it too', 'node24: 1 passed, 0 failed, 2 skipped'],
    });
  }, 60_000);
});

/** The parts of vitest's JSON report read here. */
interface Report {
  numFailedTests: number;
  numPendingTests: number;
  testResults: { assertionResults: { ancestorTitles: string[]; title: string; status: string; failureMessages: string[] }[] }[];
}
