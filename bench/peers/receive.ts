// bench:peers, the receive path: verify the signature, keep the event, answer. Every server runs in its
// own process on the same signed requests, replayed by wrk (as bench:ingest does): tekil's receiver
// (bench/ingest/tekil.ts), the hand-written INSERT per request (bench/ingest/naive.ts), and Fastify in
// front of pg-boss or BullMQ (bench/peers/receive-server.ts).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { backendCpu, cpuBetween, processTreeCpu } from '../lib/cpu.js';
import { preparePayloads, replayScript, runWrk, startServer, stopServer } from '../lib/http-load.js';
import { migrate } from '../../src/store/migrate.js';
import { createPostgresDb } from '../../src/store/postgres.js';
import { redisCpu, type Contender, type PathBench, type PeerName, type PeerRun, type RedisTargets } from './contender.js';
import { dropPrefix } from './redis.js';
import { NAIVE_TABLE, NAIVE_TABLE_SQL } from '../ingest/naive-table.js';

const SECRET = 'whsec_bench_secret_0123456789';

export interface ReceiveOptions {
  dir: string;
  dbUrl: string;
  dbName: string;
  peers: readonly PeerName[];
  redis: RedisTargets;
  payloads: number;
  seconds: number;
  warmup: number;
  connections: number;
}

export async function setUpReceive(o: ReceiveOptions): Promise<PathBench> {
  const db = createPostgresDb({ connectionString: o.dbUrl, max: 1 });
  await migrate(db);
  await db.close();
  const configFile = join(o.dir, 'tekil.yaml');
  writeFileSync(configFile, `sources:\n  bench:\n    scheme: paymos\n    secrets: ["${SECRET}"]\n    tolerance: 3600\n`);
  preparePayloads(join(o.dir, 'requests.bin'), { count: o.payloads, secret: SECRET });
  const script = join(o.dir, 'requests.lua');
  writeFileSync(script, replayScript(join(o.dir, 'requests.bin')));
  let port = 18_900 + Math.floor(Math.random() * 500);
  let offset = 0;

  const onDb = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: o.dbUrl });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };

  /** One server's run: started fresh on empty tables, warmed up, measured, stopped. */
  const measure = async (args: string[], env: NodeJS.ProcessEnv, redisKey?: 'bullmq' | 'bullmq-fsync'): Promise<PeerRun> => {
    await onDb(async (c) => {
      await c.query(NAIVE_TABLE_SQL);
      await c.query(`TRUNCATE inbox_deliveries, ${NAIVE_TABLE}`);
      await c.query("DO $$ BEGIN IF to_regclass('pgboss.job') IS NOT NULL THEN TRUNCATE pgboss.job; END IF; END $$");
      await c.query('CHECKPOINT');
    });
    const redis = redisKey ? o.redis[redisKey] : undefined;
    const prefix = `tekilpeers${randomBytes(4).toString('hex')}`;
    port++;
    const child = await startServer(
      args.join(' '),
      args,
      { ...env, DATABASE_URL: o.dbUrl, PORT: String(port), BENCH_SECRET: SECRET, BENCH_REDIS_URL: redis?.url, BENCH_REDIS_PREFIX: prefix },
      /ready|tekil listening/,
    );
    try {
      const warm = await runWrk({ port, script, seconds: o.warmup, connections: o.connections, offset: offset + 997 });
      offset += warm.requests;
      const pg0 = await onDb((c) => backendCpu(c, o.dbName));
      const node0 = processTreeCpu(child.pid!) ?? 0;
      const redis0 = redisCpu(redis);
      const r = await runWrk({ port, script, seconds: o.seconds, connections: o.connections, offset });
      offset += r.requests;
      const nodeUs = (((processTreeCpu(child.pid!) ?? 0) - node0) * 1e6) / r.requests;
      const redisUs = redis ? ((redisCpu(redis) - redis0) * 1e6) / r.requests : undefined;
      const postgresUs = (cpuBetween(pg0, await onDb((c) => backendCpu(c, o.dbName))) * 1e6) / r.requests;
      if (r.non2xx > 0 || r.errors) process.stdout.write(`    (${r.non2xx} non-2xx${r.errors ? `; ${r.errors}` : ''})\n`);
      return { rate: r.rps, p50ms: r.p50ms, p99ms: r.p99ms, nodeUs, postgresUs, redisUs };
    } finally {
      await stopServer(child);
      if (redis) await dropPrefix(redis.url, prefix);
    }
  };

  const tekilEnv = { TEKIL_LOG_LEVEL: 'warn', BENCH_CONFIG: configFile, BENCH_ROLES: 'receiver' };
  const all: Record<'tekil' | PeerName, Contender | undefined> = {
    tekil: {
      name: 'tekil',
      label: 'tekil receiver (group commit)',
      durability: 'Postgres commit before the 2xx',
      run: () => measure(['bench/ingest/tekil.ts'], tekilEnv),
    },
    insert: {
      name: 'insert',
      label: 'Fastify + one prepared INSERT … ON CONFLICT per request, own plain table (pool 10)',
      durability: 'Postgres commit before the 2xx',
      run: () => measure(['bench/ingest/naive.ts'], {}),
    },
    'pg-boss': {
      name: 'pg-boss',
      label: "Fastify + pg-boss insert() of each event-loop turn's events (pool 10)",
      durability: 'Postgres commit before the 2xx; repeats detected by job id while the job is kept',
      run: () => measure(['bench/peers/receive-server.ts'], { PEER: 'pg-boss' }),
    },
    bullmq: o.redis.bullmq && {
      name: 'bullmq',
      label: 'Fastify + BullMQ queue.add() (job id = event id)',
      durability: o.redis.bullmq.durability,
      run: () => measure(['bench/peers/receive-server.ts'], { PEER: 'bullmq' }, 'bullmq'),
    },
    'bullmq-fsync': o.redis['bullmq-fsync'] && {
      name: 'bullmq-fsync',
      label: 'Fastify + BullMQ queue.add(), private Redis appendfsync always',
      durability: o.redis['bullmq-fsync'].durability,
      run: () => measure(['bench/peers/receive-server.ts'], { PEER: 'bullmq' }, 'bullmq-fsync'),
    },
    'graphile-worker': undefined, // not a receiver: only on the processing and sending paths
  };
  const contenders = [all.tekil!, ...o.peers.map((p) => all[p]).filter((c): c is Contender => c !== undefined)];
  return { path: 'receive', contenders, close: async () => {} };
}
