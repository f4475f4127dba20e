import { defineConfig } from 'vitest/config';

// Integration tests spawn real processes; two cores means modest parallelism and generous timeouts.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts', 'test/postgresSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
