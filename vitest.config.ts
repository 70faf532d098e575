import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages from their sources, so `vitest` needs no prior build for
// in-process tests. Tests that spawn real service processes run their built `dist/` output,
// which is why the root `test` script builds first.
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  resolve: {
    alias: [{ find: /^@ax\/([a-z-]+)$/, replacement: `${root}packages/$1/src/index.ts` }],
  },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'test/**/*.test.ts', 'bench/lib/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', 'test/chaos/**'],
    benchmark: { include: ['bench/**/*.bench.ts'] },
    // Ceilings, not goals (no test asserts a wall-clock time): with two files at once on two
    // cores a test that starts service processes can take twice as long as it does alone.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at once on CI's two cores (vitest's default is cores - 1 = one): most of a test's
    // time is spent waiting on MariaDB, Redis, RabbitMQ and the service processes it starts, and
    // every test keeps to its own database, key prefix, queue names and users (CONVENTIONS.md).
    maxWorkers: 2,
    // The JSON report feeds the one-line summary that CI prints (scripts/test-summary.mjs).
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
