// graphile-worker as a peer of bench:peers on the processing and sending paths: a task that runs the
// path's handler on each job's payload (for sending: sign, POST, record the attempt grouped with the other
// peers' attempts, attempt-rows.ts), retried by graphile-worker on a throw. Settings from
// https://worker.graphile.org/docs/performance: a local queue of 500 jobs, batched completion and
// failure (completeJobBatchDelay / failJobBatchDelay 0), a pool one larger than the concurrency. The
// runner is started before the clock on an empty queue; the backlog is added in one transaction, whose
// commit (graphile's NOTIFY wakes the runner) starts the clock.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Logger as GraphileLogger, run as runGraphile, runMigrations as migrateGraphile } from 'graphile-worker';
import { backendCpu, cpuBetween } from '../lib/cpu.js';
import type { PeerRun } from './contender.js';
import { steadyPhase } from './latency.js';
import type { QueueRunOptions } from './queues.js';

const quiet = new GraphileLogger(() => () => {});

/**
 * With batched completion graphile-worker emits `job:complete` before the batch's DELETE has run: the
 * steady phase wraps its batchCompleteJobs (0.17, CommonJS, looked up on each call) to see when that
 * statement has committed. Nothing else of graphile-worker changes.
 */
let graphileCompleted: ((jobs: ReadonlyArray<{ payload: unknown }>) => void) | undefined;
let graphileWrapped = false;
function wrapBatchComplete(): void {
  if (graphileWrapped) return;
  graphileWrapped = true;
  const require = createRequire(import.meta.url);
  const mod = require('graphile-worker/dist/sql/completeJobs.js') as { batchCompleteJobs: (...args: unknown[]) => Promise<unknown> };
  const original = mod.batchCompleteJobs;
  mod.batchCompleteJobs = async (...args: unknown[]) => {
    const answer = await original(...args);
    graphileCompleted?.(args[3] as ReadonlyArray<{ payload: unknown }>);
    return answer;
  };
}

export async function runGraphileQueue(o: QueueRunOptions): Promise<PeerRun> {
  await migrateGraphile({ connectionString: o.url, logger: quiet });
  wrapBatchComplete();
  await o.pool.query('VACUUM ANALYZE');
  let done = 0;
  let finish!: () => void;
  const allDone = new Promise<void>((resolve) => (finish = resolve));
  const runner = await runGraphile({
    connectionString: o.url,
    concurrency: o.concurrency,
    maxPoolSize: o.concurrency + 1,
    noHandleSignals: true,
    preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    pollInterval: 1000,
    logger: quiet,
    taskList: {
      job: async (payload, helpers) => {
        await o.handle(helpers.job.id, (payload as { p: string }).p, (sql, params) => helpers.query(sql, params as never[]));
        if (++done === o.payloads.length) finish();
      },
    },
  });
  let pg0: Awaited<ReturnType<typeof backendCpu>>;
  let cpu0: NodeJS.CpuUsage;
  let started: number;
  try {
    await o.pool.query('CHECKPOINT'); // every side starts with no dirty pages of its set-up to write
    const client = await o.pool.connect();
    try {
      await client.query('BEGIN');
      for (let from = 0; from < o.payloads.length; from += 5000) {
        await client.query(
          `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
             SELECT ROW('job', json_build_object('p', p), NULL, NULL, 5, NULL, NULL, NULL)::graphile_worker.job_spec FROM unnest($1::text[]) AS p))`,
          [o.payloads.slice(from, from + 5000)],
        );
      }
      pg0 = await backendCpu(o.pool, o.dbName);
      cpu0 = process.cpuUsage();
      await client.query('COMMIT');
      started = performance.now();
    } finally {
      client.release();
    }
    await allDone;
    // The last completions are committed by the batch soon after; the clock stops when none is left.
    const giveUp = performance.now() + 60_000;
    const open = 'SELECT EXISTS (SELECT 1 FROM graphile_worker.jobs) AS open';
    while ((await o.pool.query<{ open: boolean }>(open)).rows[0]!.open) {
      if (performance.now() > giveUp) throw new Error('graphile-worker: jobs still not completed 60 s after their tasks returned');
      await new Promise((r) => setTimeout(r, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendCpu(o.pool, o.dbName);
    graphileCompleted = o.completions ? (jobs) => jobs.forEach((j) => o.completions!.completed((j.payload as { p: string }).p)) : undefined;
    const latency = await steadyPhase(o.steady, o.end, (i, t0) =>
      o.pool.query("SELECT graphile_worker.add_job('job', json_build_object('p', $1::text), max_attempts := 5)", [o.steadyPayload(i, t0)]),
    );
    const items = o.payloads.length;
    return {
      rate: items / seconds,
      ...latency,
      nodeUs: (cpu.user + cpu.system) / items,
      postgresUs: (cpuBetween(pg0, pg1) * 1e6) / items,
      redisUs: undefined,
    };
  } finally {
    graphileCompleted = undefined;
    await runner.stop();
  }
}
