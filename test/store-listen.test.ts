import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { waitFor, waitUntil } from './helpers/wait.js';

const CHANNEL = 'tekil_listen_test';

/** The listening backend of this test's database, as Postgres sees it. */
async function listenerPid(t: TestDb): Promise<number | undefined> {
  const { rows } = await t.db.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tekil-listen' AND query ILIKE 'LISTEN%'",
  );
  return rows[0]?.pid;
}

// PGlite's notifications are in-process: there is no connection to lose.
describe.skipIf(!onPostgres)('store: LISTEN survives a dropped connection', () => {
  let t: TestDb;
  let unlisten: (() => Promise<void>) | undefined;
  const received: string[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    unlisten = await t.db.listen(CHANNEL, (payload) => received.push(payload));
  });
  afterAll(async () => {
    await unlisten?.();
    await t?.close();
  });

  it('reconnects after its backend is terminated, says so with an empty payload, and hears the next NOTIFY', async () => {
    await t.db.query('SELECT pg_notify($1, $2)', [CHANNEL, 'before']);
    await waitUntil(() => received.includes('before'), 10_000, 'the first notification');

    const first = await waitFor(() => listenerPid(t), 10_000, 'the listening backend');
    await t.db.query('SELECT pg_terminate_backend($1)', [first]);

    // A notification sent while no one listened is lost: the empty payload tells the subscriber to poll.
    await waitUntil(() => received.includes(''), 10_000, 'the reconnect signal (an empty payload)');
    const second = await waitFor(() => listenerPid(t), 10_000, 'a new listening backend');
    expect(second).not.toBe(first);

    await t.db.query('SELECT pg_notify($1, $2)', [CHANNEL, 'after']);
    await waitUntil(() => received.includes('after'), 10_000, 'a notification after the reconnect');
  });

  it('stops reconnecting once unsubscribed', async () => {
    await unlisten!();
    unlisten = undefined;
    await waitUntil(async () => (await listenerPid(t)) === undefined, 10_000, 'the listening backend to go away');
  });
});
