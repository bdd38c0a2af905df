// graphile-worker as a sender for bench:peers: a task that signs and POSTs each job's payload and
// records the attempt with the worker's own pool (helpers.query), retried by graphile-worker on a throw.
// Settings as bench:process's (https://worker.graphile.org/docs/performance): a local queue of 500 jobs,
// batched completion and failure, a pool one larger than the concurrency.
import { performance } from 'node:perf_hooks';
import { Logger as GraphileLogger, run as runGraphile, runMigrations as migrateGraphile } from 'graphile-worker';
import { backendCpu, cpuBetween } from '../lib/cpu.js';
import type { PeerRun } from './contender.js';
import type { QueueRunOptions } from './queues.js';

const quiet = new GraphileLogger(() => () => {});

export async function runGraphileSend(o: QueueRunOptions): Promise<PeerRun> {
  await migrateGraphile({ connectionString: o.url, logger: quiet });
  for (let from = 0; from < o.payloads.length; from += 5000) {
    await o.pool.query(
      `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
         SELECT ROW('send', json_build_object('p', p), NULL, NULL, 5, NULL, NULL, NULL)::graphile_worker.job_spec FROM unnest($1::text[]) AS p))`,
      [o.payloads.slice(from, from + 5000)],
    );
  }
  await o.pool.query('VACUUM ANALYZE');
  let done = 0;
  let finish!: () => void;
  const allDone = new Promise<void>((resolve) => (finish = resolve));
  const pg0 = await backendCpu(o.pool, o.dbName);
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const runner = await runGraphile({
    connectionString: o.url,
    concurrency: o.concurrency,
    maxPoolSize: o.concurrency + 1,
    noHandleSignals: true,
    preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    pollInterval: 1000,
    logger: quiet,
    taskList: {
      send: async (payload, helpers) => {
        await o.handle(helpers.job.id, (payload as { p: string }).p, (sql, params) => helpers.query(sql, params as never[]));
        if (++done === o.payloads.length) finish();
      },
    },
  });
  await allDone;
  const pg1 = await backendCpu(o.pool, o.dbName); // while the runner's connections are still open
  await runner.stop(); // completions of the last jobs are committed before this resolves
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const left = await o.pool.query<{ n: string }>('SELECT count(*) AS n FROM graphile_worker.jobs');
  if (Number(left.rows[0]!.n) !== 0) throw new Error(`graphile-worker: ${left.rows[0]!.n} jobs left`);
  const items = o.payloads.length;
  return {
    rate: items / seconds,
    p99ms: undefined,
    nodeUs: (cpu.user + cpu.system) / items,
    postgresUs: (cpuBetween(pg0, pg1) * 1e6) / items,
    redisUs: undefined,
  };
}
