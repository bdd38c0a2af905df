// The job-queue peers of bench:peers, each run over a backlog of jobs enqueued before the clock starts
// (not timed), drained with the settings their docs give for throughput; then, on the same running
// worker, the steady phase (latency.ts): jobs added one by one at the offered rate. The same `handle`
// (a no-op, or sign + POST + attempt row) runs inside each.
//   pg-boss 10:  4 work() loops, batchSize 500 (jobs fetched and completed per statement), polling 0.5 s
//                (its floor) with the loops' first fetches staggered over it, and a loop whose batch came
//                back full fetching again at once (notifyWorker: pg-boss sleeps after every fetch
//                otherwise, full or not, and its rate would be the polling setting's); a pool of 10;
//   BullMQ:      one Worker, concurrency 64, removeOnComplete, on a Redis given by URL, in its own key
//                prefix, connected and warmed up (its Lua scripts loaded, 1,000 jobs run) before the clock; the
//                queue paused while the backlog is added, resumed when the clock starts.
// Every runner is started before the clock, on an empty queue: the backlog becomes visible at once (one
// committed transaction on Postgres) and the clock starts then, so no side's start-up is timed.
// A handler's queries (the send path's attempt rows) go to the bench's pool of 10, except graphile-worker's,
// which uses the worker's own pool as its docs advise (helpers.query).
// graphile-worker's side is graphile.ts.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { backendCpu, cpuBetween } from '../lib/cpu.js';
import { redisCpu, type PeerRun } from './contender.js';
import { bullConnection, dropPrefix, type RedisTarget } from './redis.js';
import { steadyPhase, type CompletionEnd, type LatencyEnd, type LatencyResult, type SteadyLoad } from './latency.js';

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
  /** The steady phase after the backlog, on the same worker. */
  steady: SteadyLoad;
  /** Item i of the steady phase: its payload, carrying its enqueue time t0. */
  steadyPayload(i: number, t0: number): string;
  /** Where the steady phase's items end: at the sink (send), or `completions` (process). */
  end: LatencyEnd;
  /** Set on the process path: told of each job once its completion has been committed. */
  completions?: CompletionEnd | undefined;
}

function result(items: number, seconds: number, cpu: NodeJS.CpuUsage, pgSeconds: number, redisSeconds: number | undefined, latency: LatencyResult): PeerRun {
  return {
    rate: items / seconds,
    ...latency,
    nodeUs: (cpu.user + cpu.system) / items,
    postgresUs: (pgSeconds * 1e6) / items,
    redisUs: redisSeconds === undefined ? undefined : (redisSeconds * 1e6) / items,
  };
}

export const PGBOSS_WORKERS = 4;
/** Jobs the BullMQ worker runs before the clock (the send path's handler: those attempts are counted too). */
export const BULLMQ_WARMUP = 1000;
export const PGBOSS_BATCH = 500;
export const PGBOSS_POLLING_MS = 500;
/** Fetches pg-boss's loops made at once after a full batch, instead of after a poll (checked by a test). */
export const pgbossRefetches = { count: 0 };

/**
 * pg-boss's work() completes a batch with `complete()` after the handler returns, without waiting for
 * it and without an event: the steady phase wraps the manager's complete() (pg-boss 10, CommonJS) to see
 * when that statement has committed. Nothing else of pg-boss changes.
 */
let pgbossCompleted: ((ids: readonly string[]) => void) | undefined;
let pgbossWrapped = false;
function wrapPgBossComplete(): void {
  if (pgbossWrapped) return;
  pgbossWrapped = true;
  const require = createRequire(import.meta.url);
  const Manager = require('pg-boss/src/manager.js') as { prototype: { complete: (...args: unknown[]) => Promise<unknown> } };
  const original = Manager.prototype.complete;
  Manager.prototype.complete = async function (this: unknown, ...args: unknown[]) {
    const answer = await original.apply(this, args);
    const id = args[1] as string | string[];
    pgbossCompleted?.(Array.isArray(id) ? id : [id]);
    return answer;
  };
}

export async function runPgBoss(o: QueueRunOptions): Promise<PeerRun> {
  const { default: PgBoss } = await import('pg-boss');
  wrapPgBossComplete();
  const steadyJobs = new Map<string, string>(); // id → payload, of jobs handed to a handler in the steady phase
  let inSteadyPhase = false; // the backlog's drain pays nothing for the latency's bookkeeping
  const boss = new PgBoss({ connectionString: o.url, max: 10, supervise: false, schedule: false });
  let stopping = false;
  boss.on('error', (err: Error) => {
    if (!stopping) process.stderr.write(`pg-boss: ${err.message}\n`);
  });
  await boss.start();
  try {
    await boss.createQueue('peer', { name: 'peer', retryLimit: 5, retryDelay: 1, retryBackoff: true });
    await o.pool.query("DELETE FROM pgboss.job WHERE name = 'peer'"); // an earlier round's completed jobs
    await o.pool.query('VACUUM ANALYZE pgboss.job');
    let settled = 0;
    let finish!: () => void;
    const allSettled = new Promise<void>((resolve) => (finish = resolve));
    // The loops start polling the empty queue before the clock, their first fetches spread over the
    // polling interval (as a deployment's would be).
    const workerIds: string[] = [];
    for (let w = 0; w < PGBOSS_WORKERS; w++) {
      if (w > 0) await new Promise((r) => setTimeout(r, PGBOSS_POLLING_MS / PGBOSS_WORKERS));
      const slot = w;
      workerIds[slot] = await boss.work<{ p: string }>('peer', { batchSize: PGBOSS_BATCH, pollingIntervalSeconds: PGBOSS_POLLING_MS / 1000 }, async (jobs) => {
        // A full batch means more are waiting: fetch again as soon as this one is done, not after a poll.
        if (jobs.length === PGBOSS_BATCH && workerIds[slot]) {
          boss.notifyWorker(workerIds[slot]!);
          pgbossRefetches.count++;
        }
        // A batch is completed (or failed) as a whole when this returns (or throws): a job that failed
        // is failed on its own first, so that its retry does not take the batch with it.
        if (o.completions && inSteadyPhase) for (const j of jobs) steadyJobs.set(j.id, j.data.p);
        const results = await Promise.allSettled(jobs.map((j) => o.handle(j.id, j.data.p, (sql, params) => o.pool.query(sql, params))));
        const failed = jobs.filter((_, i) => results[i]!.status === 'rejected').map((j) => j.id);
        if (failed.length > 0) await boss.fail('peer', failed);
        settled += jobs.length - failed.length;
        if (settled >= o.payloads.length) finish();
      });
    }
    // The backlog in one transaction, through pg-boss's own bulk insert: visible to the loops at its commit.
    await o.pool.query('CHECKPOINT'); // every side starts with no dirty pages of its set-up to write
    const client = await o.pool.connect();
    let pg0: Awaited<ReturnType<typeof backendCpu>>;
    let cpu0: NodeJS.CpuUsage;
    let started: number;
    try {
      await client.query('BEGIN');
      const db = { executeSql: (text: string, values: unknown[]) => client.query(text, values) };
      for (let from = 0; from < o.payloads.length; from += 5000) {
        await boss.insert(
          o.payloads.slice(from, from + 5000).map((p) => ({ name: 'peer', data: { p } })),
          { db },
        );
      }
      pg0 = await backendCpu(o.pool, o.dbName);
      cpu0 = process.cpuUsage();
      await client.query('COMMIT');
      started = performance.now();
    } finally {
      client.release();
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
    inSteadyPhase = true;
    pgbossCompleted = o.completions
      ? (ids) => {
          for (const id of ids) {
            const p = steadyJobs.get(id);
            if (p !== undefined) {
              steadyJobs.delete(id);
              o.completions!.completed(p);
            }
          }
        }
      : undefined;
    const latency = await steadyPhase(o.steady, o.end, (i, t0) => boss.send('peer', { p: o.steadyPayload(i, t0) }));
    stopping = true;
    await boss.stop({ graceful: true, wait: true });
    return result(o.payloads.length, seconds, cpu, cpuBetween(pg0, pg1), undefined, latency);
  } finally {
    pgbossCompleted = undefined;
    stopping = true;
    await boss.stop({ graceful: false, wait: true }).catch(() => {}); // after a failure: nothing left running
  }
}

export async function runBullmq(o: QueueRunOptions & { redis: RedisTarget; prefix: string }): Promise<PeerRun> {
  const { Queue, Worker } = await import('bullmq');
  const connection = bullConnection(o.redis.url);
  const queue = new Queue('peer', { connection, prefix: o.prefix });
  const bullJobOptions = { removeOnComplete: true, attempts: 5, backoff: { type: 'exponential', delay: 1000 } };
  try {
    let completed = 0;
    let finish!: () => void;
    let allDone!: Promise<void>;
    const expect = (n: number) => {
      completed = 0;
      allDone = new Promise<void>((resolve) => (finish = resolve));
      return n;
    };
    let target = expect(BULLMQ_WARMUP);
    let measuring = false;
    const worker = new Worker<{ p: string }>('peer', async (job) => o.handle(job.id!, job.data.p, (sql, params) => o.pool.query(sql, params)), {
      connection,
      prefix: o.prefix,
      concurrency: o.concurrency,
      autorun: false,
    });
    worker.on('completed', (job) => {
      // Emitted once moveToCompleted has been answered by Redis: the job's completion is stored.
      if (++completed === target) finish();
      else if (measuring && completed > target) o.completions?.completed(job.data.p);
    });
    worker.on('error', (err) => process.stderr.write(`bullmq: ${err.message}\n`));
    // Warmed up before the clock, on jobs of its own: connected, its scripts loaded, its code optimised.
    await worker.waitUntilReady();
    void worker.run();
    await queue.addBulk(
      Array.from({ length: BULLMQ_WARMUP }, (_, i) => ({ name: 'job', data: { p: o.payloads[i % o.payloads.length]! }, opts: bullJobOptions })),
    );
    await allDone;
    // The queue paused (no worker takes a job of a paused queue) while the backlog is added: it becomes
    // visible at once when the queue resumes, and the clock starts then.
    await queue.pause();
    target = expect(o.payloads.length);
    for (let from = 0; from < o.payloads.length; from += 1000) {
      await queue.addBulk(o.payloads.slice(from, from + 1000).map((p) => ({ name: 'job', data: { p }, opts: bullJobOptions })));
    }
    measuring = true;
    await o.pool.query('CHECKPOINT');
    const pg0 = await backendCpu(o.pool, o.dbName);
    const redis0 = redisCpu(o.redis);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    await queue.resume();
    await allDone;
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = await backendCpu(o.pool, o.dbName);
    const redis1 = redisCpu(o.redis);
    const latency = await steadyPhase(o.steady, o.end, (i, t0) => queue.add('job', { p: o.steadyPayload(i, t0) }, bullJobOptions));
    await worker.close();
    const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'failed');
    const left = Object.values(counts).reduce((a, b) => a + b, 0);
    if (left !== 0) throw new Error(`bullmq: ${left} jobs left (${JSON.stringify(counts)})`);
    return result(o.payloads.length, seconds, cpu, cpuBetween(pg0, pg1), redis1 - redis0, latency);
  } finally {
    await queue.close();
    await dropPrefix(o.redis.url, o.prefix);
  }
}
