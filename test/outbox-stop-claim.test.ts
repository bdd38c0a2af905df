import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import type { Db, QueryOptions } from '../src/store/db.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

/**
 * A claim still running when the dispatcher is told to stop returns its rows after stop() has
 * released the ones queued then. They must go back to pending at once too, not wait for their leases
 * (the timeout plus the lease margin, here ten minutes) with their records stuck in `sending`.
 * Postgres only: the claim is held mid-statement by a table lock another session takes.
 */

/**
 * The store as the dispatcher sees it, noting when its LISTEN has been closed. stop() closes it first,
 * then (in the same turn) releases what is queued and only then waits for the claim in flight: once
 * the LISTEN is closed and the turn has ended, the claim's rows can only arrive after that release.
 */
function notingUnlisten(db: Db): { db: Db; unlistened: () => boolean } {
  let unlistened = false;
  const noted: Db = {
    kind: db.kind,
    query: <R>(sql: string, params?: readonly unknown[], options?: QueryOptions) => db.query<R>(sql, params, options),
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
    openPool: (options) => db.openPool(options),
    listen: async (channel, onNotify) => {
      const unlisten = await db.listen(channel, onNotify);
      return async () => {
        await unlisten();
        unlistened = true;
      };
    },
    close: () => db.close(),
  };
  return { db: noted, unlistened: () => unlistened };
}

describe.skipIf(!onPostgres)('outbox: stopping while a claim is in flight', () => {
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

  it('the deliveries that claim returns after stop() are released, not left leased', async () => {
    const noted = notingUnlisten(t.db);
    const h = outboxHarness(noted.db, { dispatcher: { lease_margin: '10m' } });
    await h.endpoints.create(t.db, { url: sink.url });
    for (let i = 0; i < 3; i++) await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { i } }));

    const holder = new pg.Client({ connectionString: t.url! });
    await holder.connect();
    const dispatcher = h.newDispatcher();
    let stopped: Promise<void> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE outbox_queue IN ACCESS EXCLUSIVE MODE');
      await dispatcher.start();
      await waitUntil(
        async () => {
          // Not on the holder: inside its transaction pg_stat_activity would show the same snapshot every time.
          const { rows } = await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND application_name = 'tekil-dispatcher' AND wait_event_type = 'Lock'`,
          );
          return rows[0]!.n > 0;
        },
        10_000,
        'the dispatcher’s claim waiting on the table lock',
      );
      stopped = dispatcher.stop();
      // stop() releases what is queued now (nothing) before it waits for the claim to finish.
      await waitUntil(noted.unlistened, 10_000, 'stop() to close the dispatcher’s LISTEN');
      await holder.query('COMMIT');
      await stopped;
    } finally {
      await holder.end();
      await (stopped ?? dispatcher.stop());
    }

    expect(sink.requests).toHaveLength(0);
    const { rows } = await t.db.query<{ status: string; attempts: number; lease: string | null; lease_until: Date | null }>(
      `SELECT d.status, d.attempts, d.lease, q.lease_until FROM outbox_deliveries d JOIN outbox_queue q ON q.delivery_id = d.id ORDER BY d.id`,
    );
    expect(rows).toEqual(Array.from({ length: 3 }, () => ({ status: 'pending', attempts: 0, lease: null, lease_until: null })));
  });
});
