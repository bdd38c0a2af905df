import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import type { Db, Queryable } from '../src/store/db.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

/** The advisory lock the probe's queries wait on, so each of them holds its own connection. */
const PROBE_LOCK = 730_013;

interface PoolSeen {
  pool: (Queryable & { close(): Promise<void> }) | undefined;
  max: number;
}

/** The store, with every pool a role opens through it remembered (the pools themselves are the store's). */
function observing(db: Db, seen: PoolSeen): Db {
  return {
    ...db,
    openPool(options) {
      seen.pool = db.openPool(options);
      seen.max = options.max;
      return seen.pool;
    },
  };
}

/**
 * Takes every connection of the dispatcher's pool at once (each query waits on an advisory lock the
 * test holds until all of them wait) and reads each session's prepared statements.
 */
async function preparedPerSession(url: string, seen: PoolSeen): Promise<Map<number, number>> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [PROBE_LOCK]);
    const probes = Array.from({ length: seen.max }, () =>
      seen.pool!.query<{ pid: number; prepared: number }>(
        `SELECT pg_backend_pid() AS pid, (SELECT count(*) FROM pg_prepared_statements)::int AS prepared
         FROM (SELECT pg_advisory_xact_lock_shared(${PROBE_LOCK})) AS barrier`,
      ),
    );
    await waitUntil(
      async () => {
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'tekil-dispatcher' AND wait_event_type = 'Lock'`,
        );
        return rows[0]!.n >= seen.max;
      },
      10_000,
      'every dispatcher connection waiting on the probe lock',
    );
    await holder.query('SELECT pg_advisory_unlock($1)', [PROBE_LOCK]);
    const results = await Promise.all(probes);
    return new Map(results.map((r) => [r.rows[0]!.pid, r.rows[0]!.prepared]));
  } finally {
    await holder.end();
  }
}

async function dispatcherPids(db: Db): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tekil-dispatcher'",
  );
  return rows.map((r) => r.pid);
}

/** The dispatcher's connections come from the store and follow its settings (issue 13, bug 2). */
describe.skipIf(!onPostgres)('outbox: the dispatcher takes its connections from the store', () => {
  let t: TestDb;
  let sink: Sink;

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink();
  });
  afterAll(async () => {
    await sink?.close();
    await t?.close();
  });

  async function dispatchThrough(preparedStatements: boolean, type: string): Promise<{ pids: number[]; prepared: Map<number, number> }> {
    const store = createPostgresDb({ connectionString: t.url!, max: 4, preparedStatements });
    const seen: PoolSeen = { pool: undefined, max: 0 };
    const h = outboxHarness(observing(store, seen));
    const dispatcher = h.newDispatcher();
    try {
      await h.endpoints.create(store, { url: sink.url, event_types: [type] });
      await dispatcher.start();
      const before = sink.requests.length;
      for (let i = 0; i < 5; i++) await store.transaction((tx) => publish(tx, { type, data: { i } }));
      await waitUntil(
        async () => {
          const { rows } = await store.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM outbox_deliveries d JOIN outbox_messages m ON m.id = d.message_id WHERE m.event_type = $1 AND d.status = 'succeeded'",
            [type],
          );
          return rows[0]!.n === 5;
        },
        15_000,
        `5 ${type} deliveries succeeded`,
      );
      expect(sink.requests.length - before).toBe(5);
      expect(seen.pool, 'the dispatcher opened its pool through the store (db.openPool)').toBeDefined();
      const pids = await dispatcherPids(store);
      expect(pids.length).toBeGreaterThan(0);
      return { pids, prepared: await preparedPerSession(t.url!, seen) };
    } finally {
      await dispatcher.stop();
      await store.close();
    }
  }

  it('with store.prepared_statements off, no dispatcher session holds a prepared statement', async () => {
    const { pids, prepared } = await dispatchThrough(false, 'pool.unprepared');
    for (const pid of pids) expect(prepared.has(pid), `session ${pid} is one of the dispatcher pool's`).toBe(true);
    expect(
      [...prepared.values()].every((n) => n === 0),
      `prepared statements per session: ${JSON.stringify([...prepared])}`,
    ).toBe(true);
  });

  it('with them on (the default), the hot statements are prepared on the dispatcher’s sessions', async () => {
    const { prepared } = await dispatchThrough(true, 'pool.prepared');
    expect(Math.max(...prepared.values())).toBeGreaterThan(0);
  });
});
