export interface HeapKind {
  count: number;
  selfBytes: number;
}
export interface HeapDiffRow {
  kind: string;
  countBefore: number;
  countAfter: number;
  countDelta: number;
  bytesBefore: number;
  bytesAfter: number;
  bytesDelta: number;
}
export interface HeapDiff {
  total: { bytesBefore: number; bytesAfter: number; countBefore: number; countAfter: number };
  grew: HeapDiffRow[];
}
export function summarizeHeapSnapshot(snapshot: unknown): Map<string, HeapKind>;
export function diffHeapSummaries(before: Map<string, HeapKind>, after: Map<string, HeapKind>, options?: { top?: number }): HeapDiff;
export function heapDiffMarkdown(diff: HeapDiff, options?: { label?: string }): string;
