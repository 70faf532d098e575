export interface DigestEntry {
  readonly shape: string;
  readonly count: number;
  readonly seconds: number;
  /** Per cent of the summed time of every statement, one decimal. */
  readonly share: number;
  readonly meanMs: number;
  readonly rowsExamined: number;
}
export function statementShape(sql: string, maxLength?: number): string;
export function digestSlowLog(text: string, topN?: number): { statements: number; seconds: number; top: DigestEntry[] };
