import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { waitForLockWait } from './helpers/inbox.js';
import { discardDelivery, replayDelivery, replayMatching } from '../src/inbox/index.js';

// Two operator actions at once need two connections: server Postgres only.
describe.skipIf(!onPostgres)('inbox admin: concurrent operator actions', () => {
  let t: TestDb;

  beforeAll(async () => {
    t = await createTestDb({ poolSize: 4 });
  });
  afterAll(async () => t?.close());

  async function state(eventId: string) {
    const res = await t.db.query<{ status: string; queued: boolean }>(
      `SELECT d.status, EXISTS (SELECT 1 FROM inbox_queue q WHERE q.source = d.source AND q.event_id = d.event_id) AS queued
       FROM inbox_deliveries d WHERE d.source = 'ops' AND d.event_id = $1`,
      [eventId],
    );
    return res.rows[0];
  }

  it('a discard that meets a replay of the same stale delivery does not discard it behind its queue row', async () => {
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, body, status) VALUES ('ops', 'evt_race', '\\x7b7d', 'stale')`);
    // The replay holds its transaction open, so the discard's statement starts while the record still
    // reads as stale and the new queue row is invisible to it.
    let replayed!: () => void;
    const replayWritten = new Promise<void>((resolve) => (replayed = resolve));
    let commitReplay!: () => void;
    const replayMayCommit = new Promise<void>((resolve) => (commitReplay = resolve));
    const replay = t.db.transaction(async (tx) => {
      await replayDelivery(tx, 'ops', 'evt_race', false);
      replayed();
      await replayMayCommit;
    });
    await replayWritten;
    // Settled as soon as it ends (it may reject while the test still awaits the replay: never unhandled).
    const discard = discardDelivery(t.db, 'ops', 'evt_race').then(
      () => null,
      (err: unknown) => err,
    );
    // The discard has reached the record the replay holds locked: only now does the replay commit.
    await waitForLockWait(t.db, 'transactionid', 'the discard waiting on the replayed record');
    commitReplay();
    await replay;
    expect(await discard).toMatchObject({ code: 'CONFLICT' });
    expect(await state('evt_race')).toEqual({ status: 'pending', queued: true });
  });

  it('bulk replay of the review queue replays every dead delivery and nothing else', async () => {
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, body, status) VALUES
         ('ops', 'evt_dead_1', '\\x7b7d', 'dead'), ('ops', 'evt_dead_2', '\\x7b7d', 'dead'), ('ops', 'evt_done', '\\x7b7d', 'done')`,
    );
    expect(await replayMatching(t.db, { source: 'ops' }, false)).toBe(2);
    expect(await state('evt_dead_1')).toEqual({ status: 'pending', queued: true });
    expect(await state('evt_dead_2')).toEqual({ status: 'pending', queued: true });
    expect(await state('evt_done')).toEqual({ status: 'done', queued: false });
    const dead = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_queue WHERE source = 'ops' AND dead");
    expect(dead.rows[0]!.n).toBe(0);
  });
});
