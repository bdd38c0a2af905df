import { configDefaults, defineConfig } from 'vitest/config';

const postgresUrl = process.env.TEKIL_TEST_DATABASE_URL;
if (!postgresUrl) {
  console.log('\n[tekil] TEKIL_TEST_DATABASE_URL is not set: the Postgres half of the suite is skipped (PGlite only).\n');
}

/**
 * The end-to-end files: tekil's CLI or server started as processes, a browser, a private Postgres
 * cluster, a pooler, the chaos, simulator and proof runs. They take most of the suite's time, so
 * `npm test` (`--mode quick`) leaves them out and `npm run test:e2e` (`--mode e2e`) runs only them;
 * CI runs both. A file moves between the two by its entry here (a name or a glob), never by a rename.
 * `npx vitest run` with no mode runs every file, so `npx vitest run test/x.test.ts` finds any of them.
 */
const endToEnd = [
  'test/*-cli.test.ts',
  'test/cli-errors.test.ts',
  'test/cli-start.test.ts',
  'test/reconcile-surfaces.test.ts',
  'test/*-cli-*.test.ts',
  'test/cli-progress.test.ts',
  'test/listen.test.ts',
  'test/providers-interop.test.ts',
  'test/dashboard-browser*.test.ts',
  'test/portal-browser*.test.ts',
  'test/chaos.test.ts',
  'test/simulate-run.test.ts',
  'test/prove-tekil.test.ts',
  'test/prove-schemes.test.ts',
  'test/prove-receivers.test.ts',
  'test/multi-process.test.ts',
  'test/outbox-rate-limit-processes.test.ts',
  'test/supervisor.test.ts',
  'test/shutdown.test.ts',
  'test/worker-crash.test.ts',
  'test/outbox-crash.test.ts',
  'test/worker-pg-restart.test.ts',
  'test/pgbouncer.test.ts',
  'test/memory.test.ts',
  'test/tracing.test.ts',
];

export default defineConfig(({ mode }) => {
  const select = (include: string[]) =>
    mode === 'e2e' ? { include: endToEnd } : mode === 'quick' ? { include, exclude: [...configDefaults.exclude, ...endToEnd] } : { include };
  return {
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
        { extends: true as const, test: { name: 'pglite', ...select(['test/**/*.test.ts', 'src/**/*.test.ts']), env: { TEKIL_TEST_STORE: 'pglite' } } },
        ...(postgresUrl
          ? [{ extends: true as const, test: { name: 'postgres', ...select(['test/**/*.test.ts']), env: { TEKIL_TEST_STORE: 'postgres' } } }]
          : []),
      ],
    },
  };
});
