export function markdownTable(headers: readonly unknown[], rows: ReadonlyArray<readonly unknown[]>): string;
export function lagCell(s: { n: number; p50: number | null; p95: number | null; p99: number | null; max: number | null } | undefined): string;
export function correctnessProblems(results: BenchResults): string[];
export function renderReport(results: BenchResults): string;
export function cpuSection(scenarios: Record<string, ScenarioRun>): string;
export function burstPhasesSection(scenarios: Record<string, ScenarioRun>): string;
export function idleSection(scenarios: Record<string, ScenarioRun>): string;
export function outputSection(scenarios: Record<string, ScenarioRun>): string;
export function baselineSection(results: BenchResults): string;
export function timersSection(scenarios: Record<string, ScenarioRun>): string;
export function steadyProfileSection(scenarios: Record<string, ScenarioRun>): string;
export function historySection(scenarios: Record<string, ScenarioRun>): string;
export function purgeSection(scenarios: Record<string, ScenarioRun>): string;
export interface ScenarioRun {
  status: 'ok' | 'timeout' | 'error';
  wallMs: number;
  budgetMs: number;
  load1mBefore?: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each scenario has its own result shape
  result?: any;
}
export interface BenchResults {
  startedAt?: string;
  wallMs?: number;
  machine?: { cores: number; memGb: number; node: string };
  scenarios?: Record<string, ScenarioRun>;
  /** Set by `--baseline <commit>`: `<id>@baseline` runs measured that commit's code. */
  baseline?: { commit: string } | null;
}
