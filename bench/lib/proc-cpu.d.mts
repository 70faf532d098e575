export function parseStatTicks(stat: string): number;
export function listeningInodes(tcpTables: readonly string[], port: number): Set<string>;
export function cpuSecondsBetween(before: Record<string, number>, after: Record<string, number>, ticksPerSecond?: number): Record<string, number>;
export function pidListeningOn(port: number): number | null;
export function cpuTicks(groups: Record<string, readonly number[]>): Record<string, number>;
export function serverPids(options?: { mariadbPort?: number }): Record<string, number[]>;
export function parseProcStat(text: string): { busy: number; total: number };
export function cpuSnapshot(groups: Record<string, readonly number[]>): Record<string, number>;
