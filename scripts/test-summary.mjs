// Prints the closing line CI reads ("vitest: N passed, N failed, N skipped") from vitest's
// JSON report. Exits 1 when the report is missing or counted no test at all, so a run that
// silently tested nothing is not mistaken for a green one.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.vitest-report.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`test-summary: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const failed = report.numFailedTests ?? 0;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (passed + failed === 0) {
  console.error('test-summary: no test was executed');
  process.exit(1);
}
process.exit(failed > 0 ? 1 : 0);
