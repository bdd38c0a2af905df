// bench:peers, the processing path (claim, run a no-op handler, complete) and the sending path (sign,
// POST to the sink, record the attempt, retry on failure): each contender on a fresh database (processing)
// or on the same published messages (sending), its backlog enqueued before the clock starts, then the
// steady phase (latency.ts) on the same running worker.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Agent, request } from 'undici';
import { parseConfig } from '../../src/config/index.js';
import { buildEnvelope } from '../../src/outbox/publish.js';
import { migrate } from '../../src/store/migrate.js';
import { createPostgresDb } from '../../src/store/postgres.js';
import { withFreshDatabase } from '../lib/database.js';
import { benchTekil } from '../process/sides.js';
import { runTekilDispatch, setUpTekilDispatch } from '../dispatch/tekil.js';
import type { Contender, PathBench, PeerName, PeerRun, RedisTargets } from './contender.js';
import { runGraphileQueue } from './graphile.js';
import { CompletionEnd, startLatencySink, type SteadyLoad } from './latency.js';
import { AttemptRows } from './attempt-rows.js';
import { BULLMQ_WARMUP, PGBOSS_BATCH, PGBOSS_POLLING_MS, PGBOSS_WORKERS, runBullmq, runPgBoss, type JobHandler, type QueueRunOptions } from './queues.js';
import { standardWebhooksSigner } from './sign.js';
import { processPayload, sendData, tekilProcessSteady, tekilSendSteady } from './tekil-steady.js';

const GRAPHILE_CONCURRENCY = 24;
const BULLMQ_PROCESS_CONCURRENCY = 64;
const pgbossLabel = `pg-boss work() (${PGBOSS_WORKERS} staggered loops, batchSize ${PGBOSS_BATCH}, polling ${PGBOSS_POLLING_MS / 1000} s, refetch when full, pool 10)`;

/** Every contender that applies, tekil first, the peers asked for after it. */
function pick(all: Record<'tekil' | PeerName, Contender | undefined>, peers: readonly PeerName[]): Contender[] {
  return [all.tekil!, ...peers.map((p) => all[p]).filter((c): c is Contender => c !== undefined)];
}

const bullPrefix = () => `tekilpeers${randomBytes(4).toString('hex')}`;

export function setUpProcess(o: { messages: number; peers: readonly PeerName[]; redis: RedisTargets; steady: SteadyLoad }): PathBench {
  const workerDefaults = parseConfig({}).worker;
  const payloads = Array.from({ length: o.messages }, (_, i) =>
    JSON.stringify({ event_id: `evt_${i}`, event_type: 'invoice.paid', data: { id: `inv_${i}`, status: 'paid' } }),
  );
  const noop: JobHandler = async () => {};
  /** A queue peer's run on a fresh database, with a pool for its readings. */
  const onFresh = (prefix: string, concurrency: number, run: (q: QueueRunOptions) => Promise<PeerRun>) => () =>
    withFreshDatabase(prefix, async (url, dbName) => {
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      pool.on('error', () => {}); // the database is dropped WITH (FORCE) afterwards
      const completions = new CompletionEnd();
      try {
        return await run({
          url,
          dbName,
          pool,
          payloads,
          handle: noop,
          concurrency,
          steady: o.steady,
          steadyPayload: processPayload,
          end: completions,
          completions,
        });
      } finally {
        await pool.end();
      }
    });
  const bull = (key: 'bullmq' | 'bullmq-fsync', label: string): Contender | undefined => {
    const redis = o.redis[key];
    return (
      redis && {
        name: key,
        label,
        durability: `${redis.durability}; no attempt rows`,
        run: onFresh('tekil_peers_bullmq', BULLMQ_PROCESS_CONCURRENCY, (q) => runBullmq({ ...q, redis, prefix: bullPrefix() })),
      }
    );
  };
  const all: Record<'tekil' | PeerName, Contender | undefined> = {
    tekil: {
      name: 'tekil',
      label: `tekil worker (batch ${workerDefaults.batch_size}, ${workerDefaults.concurrency} loops)`,
      durability: 'Postgres; one attempt row per item',
      run: () =>
        withFreshDatabase('tekil_peers_process', async (url, name) => {
          const options = { batch: workerDefaults.batch_size, loops: workerDefaults.concurrency };
          const backlog = await benchTekil(url, name, { n: o.messages, ...options });
          return { ...backlog, ...(await tekilProcessSteady(url, { ...options, load: o.steady })), redisUs: undefined };
        }),
    },
    'graphile-worker': {
      name: 'graphile-worker',
      label: `graphile-worker (concurrency ${GRAPHILE_CONCURRENCY}, local queue 500, batched completion)`,
      durability: 'Postgres; no attempt rows',
      run: onFresh('tekil_peers_graphile', GRAPHILE_CONCURRENCY, runGraphileQueue),
    },
    'pg-boss': {
      name: 'pg-boss',
      label: pgbossLabel,
      durability: 'Postgres; no attempt rows',
      run: onFresh('tekil_peers_pgboss', BULLMQ_PROCESS_CONCURRENCY, runPgBoss),
    },
    bullmq: bull('bullmq', `BullMQ Worker (concurrency ${BULLMQ_PROCESS_CONCURRENCY}, removeOnComplete)`),
    'bullmq-fsync': bull('bullmq-fsync', `BullMQ Worker (concurrency ${BULLMQ_PROCESS_CONCURRENCY}), private Redis appendfsync always`),
    insert: undefined, // a receiver only
  };
  return { path: 'process', contenders: pick(all, o.peers), close: async () => {} };
}

/**
 * The sending path on one database: tekil's messages published once (bench/dispatch/tekil.ts), and their
 * payloads handed to each peer as jobs. Every peer signs as Standard Webhooks with node:crypto as tekil
 * does (sign.ts), POSTs with undici over keep-alive connections, records each attempt as one row (grouped
 * per event-loop turn in one prepared INSERT, as tekil does: attempt-rows.ts), and throws on a non-2xx
 * answer or a network error so that its queue retries the job.
 */
export async function setUpSend(o: {
  dbUrl: string;
  dbName: string;
  messages: number;
  concurrency: number;
  peers: readonly PeerName[];
  redis: RedisTargets;
  steady: SteadyLoad;
}): Promise<PathBench> {
  const db = createPostgresDb({ connectionString: o.dbUrl, max: 8 });
  const pool = new pg.Pool({ connectionString: o.dbUrl, max: 10 });
  pool.on('error', () => {});
  const sink = await startLatencySink();
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: o.concurrency });
  try {
    await migrate(db);
    const setup = await setUpTekilDispatch(db, { sinkUrl: sink.url, concurrency: o.concurrency, messages: o.messages });
    await pool.query('CREATE TABLE peer_attempts (job_id text NOT NULL, status_code int, error text, attempted_at timestamptz NOT NULL DEFAULT now())');
    const payloads = setup.bodies.map((b) => b.toString('utf8'));
    // The steady phase's bodies: tekil's envelope of the same data tekil publishes.
    const steadyPayload = (i: number, t0: number) =>
      buildEnvelope(`msg_lat_${i}`, { type: 'invoice.paid', resourceId: `inv_lat_${i}`, data: sendData(i, t0) }, new Date()).toString('utf8');
    const sign = standardWebhooksSigner(`whsec_${randomBytes(32).toString('base64')}`);
    // Every peer's attempts, grouped and prepared (attempt-rows.ts); made anew for each run.
    let attempts = new AttemptRows(pool);
    const send: JobHandler = async (id, payload) => {
      let status: number | null = null;
      let error: string | null = null;
      try {
        const res = await request(sink.url, {
          dispatcher: agent,
          method: 'POST',
          body: payload,
          headers: { 'content-type': 'application/json', ...sign(id, Math.floor(Date.now() / 1000), payload) },
        });
        await res.body.dump();
        status = res.statusCode;
      } catch (err) {
        error = (err as Error).message;
      }
      await attempts.add({ jobId: id, status, error });
      if (status === null || status < 200 || status >= 300) throw new Error(`sink answered ${status ?? error}`);
    };
    const steadyItems = Math.round(o.steady.rate * o.steady.seconds);
    /** Each run starts with no attempt rows, and checks afterwards that there is one per message. */
    const checked =
      (run: (q: QueueRunOptions) => Promise<PeerRun>, warmupJobs = 0) =>
      async () => {
        await pool.query('TRUNCATE peer_attempts');
        await pool.query('CHECKPOINT');
        attempts = new AttemptRows(pool);
        const r = await run({
          url: o.dbUrl,
          dbName: o.dbName,
          pool,
          payloads,
          handle: send,
          concurrency: o.concurrency,
          steady: o.steady,
          steadyPayload,
          end: sink,
        });
        const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM peer_attempts WHERE status_code = 200');
        const expected = payloads.length + steadyItems + warmupJobs;
        if (Number(rows[0]!.n) !== expected) throw new Error(`${rows[0]!.n} successful attempts recorded for ${expected} messages`);
        return r;
      };
    const bull = (key: 'bullmq' | 'bullmq-fsync', label: string): Contender | undefined => {
      const redis = o.redis[key];
      return (
        redis && {
          name: key,
          label,
          durability: `${redis.durability}; one attempt row per attempt`,
          run: checked((q) => runBullmq({ ...q, redis, prefix: bullPrefix() }), BULLMQ_WARMUP),
        }
      );
    };
    const all: Record<'tekil' | PeerName, Contender | undefined> = {
      tekil: {
        name: 'tekil',
        label: `tekil dispatcher (concurrency ${o.concurrency})`,
        durability: 'Postgres; one attempt row per attempt',
        run: async () => {
          await pool.query('CHECKPOINT');
          const backlog = await runTekilDispatch(db, o.dbName, setup);
          return { ...backlog, ...(await tekilSendSteady(db, pool, setup, o.steady, sink)), redisUs: undefined };
        },
      },
      'graphile-worker': {
        name: 'graphile-worker',
        label: `graphile-worker task (concurrency ${o.concurrency}, local queue 500, batched completion)`,
        durability: 'Postgres; one attempt row per attempt',
        run: checked(runGraphileQueue),
      },
      'pg-boss': { name: 'pg-boss', label: pgbossLabel, durability: 'Postgres; one attempt row per attempt', run: checked(runPgBoss) },
      bullmq: bull('bullmq', `BullMQ Worker (concurrency ${o.concurrency}, removeOnComplete)`),
      'bullmq-fsync': bull('bullmq-fsync', `BullMQ Worker (concurrency ${o.concurrency}), private Redis appendfsync always`),
      insert: undefined, // a receiver only
    };
    return {
      path: 'send',
      contenders: pick(all, o.peers),
      async close() {
        sink.stop();
        await agent.close();
        await pool.end();
        await db.close();
      },
    };
  } catch (err) {
    sink.stop();
    await agent.close();
    await pool.end();
    await db.close();
    throw err;
  }
}
