// Prints the closing line CI reads ("vitest: N passed, N failed, N skipped") from vitest's
// JSON report. Before it, one line per skipped or todo test (file > describe > test), so a
// skip is seen by name and not only counted, and one per test file that failed outside its
// tests (it did not load, or a beforeAll/afterAll hook threw: vitest then reports its tests as
// skipped and counts no failed test); such a file counts as one failure. The closing line
// stays the last line. Each failed test is named too, with the first line of its failure, so
// the tail of a CI log says which test failed without the rest of the log.
//
// Usage: node scripts/test-summary.mjs [report.json] [label]
//   report.json  default .vitest-report.json
//   label        one word starting the closing line, default `vitest` (e.g. `node24` for a
//                second runtime's run)
// Exits 1 when the report is missing, counted no test at all, or records a failure; 2 on a bad
// label or extra arguments.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [file = '.vitest-report.json', label = 'vitest', ...extra] = process.argv.slice(2);
if (extra.length > 0 || !/^[\w.-]+$/.test(label)) {
  console.error('usage: node scripts/test-summary.mjs [report.json] [label]  (label: one word, e.g. node24)');
  process.exit(2);
}

let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`test-summary: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

/** A test file's path relative to the working directory when it is below it. */
function shown(filePath) {
  const relative = path.relative(process.cwd(), filePath);
  return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? filePath : relative;
}

const files = Array.isArray(report.testResults) ? report.testResults : [];
/** vitest's JSON statuses of tests that did not run: `pending` is also counted as skipped. */
const NOT_RUN = new Map([
  ['skipped', 'skipped'],
  ['pending', 'skipped'],
  ['todo', 'todo'],
]);
const notRun = [];
const failedTests = [];
const brokenFiles = [];
for (const result of files) {
  const name = shown(String(result.name ?? '?'));
  const tests = Array.isArray(result.assertionResults) ? result.assertionResults : [];
  for (const test of tests) {
    const titles = [...(Array.isArray(test.ancestorTitles) ? test.ancestorTitles : []), test.title ?? test.fullName ?? '?'];
    if (test.status === 'failed') {
      const messages = Array.isArray(test.failureMessages) ? test.failureMessages : [];
      const first = String(messages[0] ?? '').split('\n')[0]?.trim().slice(0, 300);
      failedTests.push(`${label} failed: ${name} > ${titles.join(' > ')}${first ? `: ${first}` : ''}`);
      continue;
    }
    const kind = NOT_RUN.get(test.status);
    if (kind === undefined) continue;
    notRun.push(`${label} ${kind}: ${name} > ${titles.join(' > ')}`);
  }
  if (result.status === 'failed' && !tests.some((t) => t.status === 'failed')) {
    const message = String(result.message ?? '').split('\n')[0]?.trim();
    brokenFiles.push(`${label} failed outside its tests: ${name}${message ? `: ${message}` : ' (a hook or the file itself; see its FAIL block above)'}`);
  }
}

const passed = report.numPassedTests ?? 0;
const failed = (report.numFailedTests ?? 0) + brokenFiles.length;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
const noneRan = passed + (report.numFailedTests ?? 0) === 0;
for (const line of [...notRun, ...failedTests, ...brokenFiles]) console.log(line);
if (noneRan) console.error('test-summary: no test was executed');
console.log(`${label}: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(noneRan || failed > 0 || (report.numFailedTestSuites ?? 0) > 0 ? 1 : 0);
