import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Installs or names the missing system tools and starts a stopped Postgres/Redis before any test.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration suites own their namespaces (database, Redis prefix, ports) so files run in parallel.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
