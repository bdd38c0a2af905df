// The job-queue peers of bench:peers, each run over a backlog of jobs enqueued before the clock starts
// (not timed), drained with the settings their docs give for throughput, and stopped once every job is
// settled; the same `handle` (a no-op, or sign + POST + attempt row) runs inside each.
//   pg-boss 10:  4 work() loops, batchSize 500 (jobs fetched and completed per statement), polling 0.5 s
//                (its floor), a pool of 10;
//   BullMQ:      one Worker, concurrency 64, removeOnComplete, on a Redis given by URL, in its own key prefix.
// A handler's queries (the send path's attempt rows) go to the bench's pool of 10, except graphile-worker's,
// which uses the worker's own pool as its docs advise (helpers.query).
// graphile-worker's side is bench/process/sides.ts's (processing) and sendGraphile below (sending).
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { backendCpu, cpuBetween } from '../lib/cpu.js';
import { redisCpu, type PeerRun } from './contender.js';
import { bullConnection, dropPrefix, type RedisTarget } from './redis.js';

/** One job's work, given its id and payload; throws to have the queue retry it. */
export type JobHandler = (id: string, payload: string, pgQuery: (sql: string, params: unknown[]) => Promise<unknown>) => Promise<void>;

export interface QueueRunOptions {
  url: string;
  dbName: string;
  /** A pool on the bench database: CPU readings, checks, and the handler's queries for BullMQ. */
  pool: pg.Pool;
  payloads: readonly string[];
  handle: JobHandler;
  concurrency: number;
}

function result(items: number, seconds: number, cpu: NodeJS.CpuUsage, pgSeconds: number, redisSeconds: number | undefined): PeerRun {
  return {
    rate: items / seconds,
    p99ms: undefined,
    nodeUs: (cpu.user + cpu.system) / items,
    postgresUs: (pgSeconds * 1e6) / items,
    redisUs: redisSeconds === undefined ? undefined : (redisSeconds * 1e6) / items,
  };
}

export const PGBOSS_WORKERS = 4;
export const PGBOSS_BATCH = 500;

export async function runPgBoss(o: QueueRunOptions): Promise<PeerRun> {
  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: o.url, max: 10, supervise: false, schedule: false });
  let stopping = false;
  boss.on('error', (err: Error) => {
    if (!stopping) process.stderr.write(`pg-boss: ${err.message}\n`);
  });
  await boss.start();
  try {
    await boss.createQueue('peer', { name: 'peer', retryLimit: 5, retryDelay: 1, retryBackoff: true });
    await o.pool.query("DELETE FROM pgboss.job WHERE name = 'peer'"); // an earlier round's completed jobs
    for (let from = 0; from < o.payloads.length; from += 5000) {
      await boss.insert(o.payloads.slice(from, from + 5000).map((p) => ({ name: 'peer', data: { p } })));
    }
    await o.pool.query('VACUUM ANALYZE pgboss.job');
    let settled = 0;
    let finish!: () => void;
    const allSettled = new Promise<void>((resolve) => (finish = resolve));
    const pg0 = await backendCpu(o.pool, o.dbName);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    for (let w = 0; w < PGBOSS_WORKERS; w++) {
      await boss.work<{ p: string }>('peer', { batchSize: PGBOSS_BATCH, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        // A batch is completed (or failed) as a whole when this returns (or throws): a job that failed
        // is failed on its own first, so that its retry does not take the batch with it.
        const results = await Promise.allSettled(jobs.map((j) => o.handle(j.id, j.data.p, (sql, params) => o.pool.query(sql, params))));
        const failed = jobs.filter((_, i) => results[i]!.status === 'rejected').map((j) => j.id);
        if (failed.length > 0) await boss.fail('peer', failed);
        settled += jobs.length - failed.length;
        if (settled >= o.payloads.length) finish();
      });
    }
    await allSettled;
    // pg-boss does not wait for a batch's completion statement before it fetches the next batch: an item
    // is done once that statement has committed, so the clock stops when no job of the run is left open.
    const open = "SELECT EXISTS (SELECT 1 FROM pgboss.job WHERE name = 'peer' AND state <> 'completed') AS open";
    const giveUp = performance.now() + 60_000;
    while ((await o.pool.query<{ open: boolean }>(open)).rows[0]!.open) {
      if (performance.now() > giveUp) throw new Error('pg-boss: jobs still not completed 60 s after their handlers returned');
      await new Promise((r) => setTimeout(r, 5));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendCpu(o.pool, o.dbName);
    stopping = true;
    await boss.stop({ graceful: true, wait: true });
    return result(o.payloads.length, seconds, cpu, cpuBetween(pg0, pg1), undefined);
  } finally {
    stopping = true;
    await boss.stop({ graceful: false, wait: true }).catch(() => {}); // after a failure: nothing left running
  }
}

export async function runBullmq(o: QueueRunOptions & { redis: RedisTarget; prefix: string }): Promise<PeerRun> {
  const { Queue, Worker } = await import('bullmq');
  const connection = bullConnection(o.redis.url);
  const queue = new Queue('peer', { connection, prefix: o.prefix });
  try {
    for (let from = 0; from < o.payloads.length; from += 1000) {
      await queue.addBulk(
        o.payloads
          .slice(from, from + 1000)
          .map((p) => ({ name: 'job', data: { p }, opts: { removeOnComplete: true, attempts: 5, backoff: { type: 'exponential', delay: 1000 } } })),
      );
    }
    let completed = 0;
    let finish!: () => void;
    const allDone = new Promise<void>((resolve) => (finish = resolve));
    const pg0 = await backendCpu(o.pool, o.dbName);
    const redis0 = redisCpu(o.redis);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    const worker = new Worker<{ p: string }>('peer', async (job) => o.handle(job.id!, job.data.p, (sql, params) => o.pool.query(sql, params)), {
      connection,
      prefix: o.prefix,
      concurrency: o.concurrency,
    });
    worker.on('completed', () => {
      if (++completed === o.payloads.length) finish();
    });
    worker.on('error', (err) => process.stderr.write(`bullmq: ${err.message}\n`));
    await allDone;
    await worker.close();
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'failed');
    const left = Object.values(counts).reduce((a, b) => a + b, 0);
    if (left !== 0) throw new Error(`bullmq: ${left} jobs left (${JSON.stringify(counts)})`);
    return result(o.payloads.length, seconds, cpu, cpuBetween(pg0, await backendCpu(o.pool, o.dbName)), redisCpu(o.redis) - redis0);
  } finally {
    await queue.close();
    await dropPrefix(o.redis.url, o.prefix);
  }
}
