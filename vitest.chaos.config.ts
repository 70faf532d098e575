import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The fault-drill suite (`pnpm test:chaos`, docs/fault-drills.md): real services against
// private MariaDB, Redis and RabbitMQ servers that each drill stops and starts. One file at a
// time, one drill at a time: the drills measure recovery and must not compete for the CPU.
const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  resolve: {
    alias: [{ find: /^@ax\/([a-z-]+)$/, replacement: `${root}packages/$1/src/index.ts` }],
  },
  test: {
    include: ['test/chaos/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    fileParallelism: false,
    sequence: { concurrent: false },
    // One drill normally takes 0.5–2.5 min; its own waits are bounded below this.
    testTimeout: 420_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // The JSON report feeds CI's `chaos: N passed, N failed` line (scripts/test-summary.mjs).
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-chaos-report.json' },
  },
});
