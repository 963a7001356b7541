import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The whole suite (`npm test`). Files named *.unit.test.ts start no process and are quick: they are
    // also run alone, by `npm run test:unit` (a path filter: `vitest run .unit.test.ts`).
    include: ['test/**/*.test.ts'],
    // Stops what a test file started and left running (test/helpers/cleanup.ts).
    setupFiles: ['test/helpers/teardown.ts'],
    // Every respgate a test starts keeps nothing (no .respgate-data in the repository); the tests of
    // the data directory remove this variable for their own processes (test/platform/data-dir.test.ts).
    env: { RESPGATE_EPHEMERAL: '1' },
    // Integration tests start real redis-server and platform processes: give them room, and keep
    // the 2-core CI machine from being oversubscribed.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
