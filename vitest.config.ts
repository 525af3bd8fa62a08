import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration suites own their namespaces (database, Redis prefix, ports) so files run in parallel.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
