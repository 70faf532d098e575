import type { MariaDbServer } from '@ax/testing';

export function checkBufferPool(value: unknown, flag?: string): string;
export function privateMariaDbArgs(bufferPool: unknown): string[];
export function startPrivateMariaDb(options: {
  /** InnoDB buffer pool, e.g. `2G` or `512M`. */
  bufferPool: string;
  /** A folder kept between runs instead of a temporary one. */
  keepDir?: string;
  /** Default 30,000. */
  startTimeoutMs?: number;
  /** Default 30,000. */
  stopTimeoutMs?: number;
  /** More mariadbd arguments, after the sizing. */
  extraArgs?: readonly string[];
}): Promise<MariaDbServer>;
export function slowLogArgs(file: string): string[];
export function openSlowLogWindow(pool: { query: (sql: string) => Promise<unknown> }, file: string): Promise<{ end: () => Promise<string> }>;
