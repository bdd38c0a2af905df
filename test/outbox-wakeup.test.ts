import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';
import { startSink, type Sink } from './helpers/sink.js';

/**
 * Concurrent publishers share one NOTIFY (Postgres commits notifying transactions one at a time): the
 * first open publishing transaction notifies, the others do not, and the dispatcher still sends the
 * others' messages at once, without waiting for its poll.
 */
describe.runIf(onPostgres)('outbox: one wake-up for concurrent publishers', () => {
  let t: TestDb;
  let dispatcher: Dispatcher;
  let sink: Sink;
  const clients: pg.Client[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    // A poll far beyond the test's wait: only a wake-up can send in time.
    const h = outboxHarness(t.db, { dispatcher: { poll_interval: '1h' } });
    sink = await startSink();
    await h.endpoints.create(t.db, { url: sink.url });
    dispatcher = h.newDispatcher();
    await dispatcher.start();
    for (let i = 0; i < 2; i++) {
      const c = new pg.Client({ connectionString: t.url! });
      await c.connect();
      clients.push(c);
    }
  });
  afterAll(async () => {
    await dispatcher?.stop();
    for (const c of clients) await c.end();
    await sink?.close();
    await t?.close();
  });

  it('only the first open publisher notifies; a later one committing after it is still sent at once', async () => {
    const [first, second] = clients as [pg.Client, pg.Client];
    const notified = async (c: pg.Client) =>
      (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")).rows[0]!.n;
    await first.query('BEGIN');
    const a = await publish(first, { type: 'invoice.paid', resourceId: 'inv_a', data: {} });
    await second.query('BEGIN');
    const b = await publish(second, { type: 'invoice.paid', resourceId: 'inv_b', data: {} });
    // The first holds the wake-up lock (its NOTIFY goes out at its commit); the second skipped it.
    expect(await notified(first)).toBe(1);
    expect(await notified(second)).toBe(0);
    // The notifying transaction commits first: the other's message is not visible to the claim it wakes.
    await first.query('COMMIT');
    await second.query('COMMIT');
    await sink.waitFor(2);
    expect(sink.requests.map((r) => r.headers['webhook-id']).sort()).toEqual([a.id, b.id].sort());
  });
});
