export function slotKey(taskName: string, expectedMs: number, runNo?: number): string;
export function parseIdempotencyKey(key: string): { taskName: string; expectedMs: number; runNo: number } | null;
