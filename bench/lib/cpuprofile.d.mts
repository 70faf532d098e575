export interface CpuProfile {
  nodes?: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber?: number }; children?: number[] }>;
  samples?: number[];
  timeDeltas?: number[];
  startTime?: number;
  endTime?: number;
}
export interface FunctionSelfTime {
  name: string;
  url: string;
  selfMs: number;
  pct: number;
}
export interface ProfileAggregate {
  totalMs: number;
  idleMs: number;
  busyMs: number;
  functions: FunctionSelfTime[];
}
export function profileClockUs(): number;
export function shortUrl(url: string): string;
export function aggregateSelfTime(profile: CpuProfile, window?: { fromUs?: number; toUs?: number }): ProfileAggregate;
export function areaOf(url: string): string;
export function aggregateByArea(aggregated: ProfileAggregate): Array<{ area: string; selfMs: number; pct: number }>;
export function mergeAggregates(list: readonly ProfileAggregate[]): ProfileAggregate;
export function aggregateInclusiveTime(
  profile: CpuProfile,
  window?: { fromUs?: number; toUs?: number },
  urlPattern?: RegExp,
): Array<{ name: string; url: string; totalMs: number; pct: number }>;
