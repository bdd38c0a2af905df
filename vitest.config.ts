import { defineConfig } from 'vitest/config';

const postgresUrl = process.env.TEKIL_TEST_DATABASE_URL;
if (!postgresUrl) {
  console.log('\n[tekil] TEKIL_TEST_DATABASE_URL is not set: the Postgres half of the suite is skipped (PGlite only).\n');
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // Three files at a time on two cores: many tests wait on child processes, sockets and Postgres
    // rather than on the CPU (the suite measured 458 s with two, 283 s with three).
    maxWorkers: 3,
    // Files share their worker's module cache instead of each importing Fastify, node-postgres and
    // tekil afresh (the suite's import time fell from about 400 s to a fraction of it); every file
    // still opens its own store, server and processes and closes them.
    isolate: false,
    hookTimeout: 60_000,
    projects: [
      { extends: true as const, test: { name: 'pglite', include: ['test/**/*.test.ts', 'src/**/*.test.ts'], env: { TEKIL_TEST_STORE: 'pglite' } } },
      ...(postgresUrl
        ? [{ extends: true as const, test: { name: 'postgres', include: ['test/**/*.test.ts'], env: { TEKIL_TEST_STORE: 'postgres' } } }]
        : []),
    ],
  },
});
