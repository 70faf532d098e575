import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The smoke pass (`pnpm test:smoke`): what can break on one Node line and not another, run on a
// second runtime after the full suite ran on `.node-version` (.ci/run). Node 20 is still in
// `engines`, so this is what a user on it runs into first: the pure packages every service
// loads, the SDK a business service embeds, axctl on an operator's machine, the worker's native
// SQLite outbox, and real service processes from their built `dist/` end to end. Not the whole
// suite again: the protocol, the API and the console do not change with the runtime's major.
export const SMOKE_FILES = [
  'packages/core/src/**/*.test.ts',
  'packages/kit/src/**/*.test.ts',
  'packages/sdk/src/**/*.test.ts',
  // axctl's own logic; its commands against a server run in the full suite
  'packages/cli/src/{args,table,apply-diff,usage,sse}.test.ts',
  'services/worker/src/outbox*.test.ts',
  'test/node-runtime.test.ts',
  'test/e2e/cron-end-to-end.test.ts',
];

// Spread, not mergeConfig: that would append to the full suite's `include` instead of replacing it.
export default defineConfig({ ...base, test: { ...base.test, include: SMOKE_FILES } });
