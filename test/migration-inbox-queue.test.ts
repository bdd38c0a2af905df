import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDb, migrateUpTo } from './helpers/migration-db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { replayDelivery } from '../src/inbox/index.js';
import { createInboxWorker } from '../src/worker/worker.js';

const SOURCE = 'legacy';

interface QueueRow {
  event_id: string;
  resource_id: string | null;
  dead: boolean;
  attempts: number;
  locked_by: string | null;
  leased: boolean;
  due: boolean;
  guard_bypass: boolean;
  provider_matches: boolean;
  received_matches: boolean;
}

/** A store at migration 003, holding deliveries in every state of the old shape, upgraded by migrate(). */
describe('migrations 004/005: upgrading a store that holds deliveries', () => {
  let store: { db: Db; close(): Promise<void> };
  let db: Db;
  let legacyAttempts: Array<{ event_id: string; attempt: number; outcome: string; error: string | null; worker: string | null }>;

  beforeAll(async () => {
    store = await createEmptyDb();
    db = store.db;
    await migrateUpTo(db, 3);
    // The old shape: the queue columns live on inbox_deliveries.
    await db.exec(`
      INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, received_at, status, attempts,
                                    next_attempt_at, locked_until, locked_by, claimed_at, last_attempt_at, guard_bypass, last_error,
                                    processed_at, result_ref)
      VALUES
        -- never claimed, due now; no occurred_at: its provider time is its received time
        ('${SOURCE}', 'evt_pending', 'res_p', 'thing.created', NULL, '\\x7b7d', now() - interval '5 minutes', 'pending', 0,
         now() - interval '5 minutes', NULL, NULL, NULL, NULL, false, NULL, NULL, NULL),
        -- claimed by a worker whose lease is still live
        ('${SOURCE}', 'evt_leased', 'res_l', 'thing.created', now() - interval '10 minutes', '\\x7b7d', now() - interval '4 minutes', 'pending', 1,
         now() - interval '4 minutes', now() + interval '1 hour', 'old-worker:7', now() - interval '1 second', now() - interval '1 second', false, NULL, NULL, NULL),
        -- retried once, waiting for its next attempt, replayed with force before that
        ('${SOURCE}', 'evt_waiting', 'res_w', 'thing.created', now() - interval '9 minutes', '\\x7b7d', now() - interval '3 minutes', 'pending', 1,
         now() + interval '1 hour', NULL, NULL, now() - interval '2 minutes', now() - interval '2 minutes', true, 'timeout', NULL, NULL),
        -- gave up: in the review queue
        ('${SOURCE}', 'evt_dead', 'res_d', 'thing.created', now() - interval '8 minutes', '\\x7b7d', now() - interval '2 minutes', 'dead', 3,
         now() - interval '1 minute', NULL, NULL, now() - interval '1 minute', now() - interval '1 minute', false, 'upstream said no', now() - interval '1 minute', NULL),
        -- settled
        ('${SOURCE}', 'evt_done', 'res_x', 'thing.created', now() - interval '7 minutes', '\\x7b7d', now() - interval '1 minute', 'done', 1,
         now() - interval '1 minute', NULL, NULL, now() - interval '50 seconds', now() - interval '50 seconds', false, NULL, now() - interval '50 seconds', 'ref_1');

      INSERT INTO inbox_attempts (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
      VALUES
        ('${SOURCE}', 'evt_waiting', 1, 'old-worker:1', now() - interval '2 minutes', now() - interval '2 minutes', 4, 'retry', 'timeout'),
        ('${SOURCE}', 'evt_dead', 1, 'old-worker:1', now() - interval '3 minutes', now() - interval '3 minutes', 3, 'retry', 'upstream 503'),
        ('${SOURCE}', 'evt_dead', 2, 'old-worker:2', now() - interval '2 minutes', now() - interval '2 minutes', 5, 'lost', 'lease expired'),
        ('${SOURCE}', 'evt_dead', 3, 'old-worker:1', now() - interval '1 minute', now() - interval '1 minute', 6, 'dead', 'upstream said no'),
        ('${SOURCE}', 'evt_done', 1, 'old-worker:2', now() - interval '50 seconds', now() - interval '50 seconds', 7, 'done', NULL);
    `);
    const before = await db.query<(typeof legacyAttempts)[number]>('SELECT event_id, attempt, outcome, error, worker FROM inbox_attempts ORDER BY id');
    legacyAttempts = before.rows;
    expect(legacyAttempts).toHaveLength(5);

    // Later migrations (006 on) apply after these two; this test is about these two.
    expect((await migrate(db)).slice(0, 2)).toEqual(['004_inbox_queue', '005_final_attempt']);
  });
  afterAll(async () => store?.close());

  it('queues exactly the pending and dead deliveries, with their lease, attempts and flags', async () => {
    const queue = await db.query<QueueRow>(
      `SELECT q.event_id, q.resource_id, q.dead, q.attempts, q.locked_by, coalesce(q.locked_until > now(), false) AS leased,
              q.next_attempt_at <= now() AS due, q.guard_bypass,
              q.provider_at = coalesce(d.occurred_at, d.received_at) AS provider_matches, q.received_at = d.received_at AS received_matches
       FROM inbox_queue q JOIN inbox_deliveries d USING (source, event_id)
       ORDER BY q.event_id`,
    );
    expect(queue.rows).toEqual([
      {
        event_id: 'evt_dead',
        resource_id: 'res_d',
        dead: true,
        attempts: 3,
        locked_by: null,
        leased: false,
        due: true,
        guard_bypass: false,
        provider_matches: true,
        received_matches: true,
      },
      {
        event_id: 'evt_leased',
        resource_id: 'res_l',
        dead: false,
        attempts: 1,
        locked_by: 'old-worker:7',
        leased: true,
        due: true,
        guard_bypass: false,
        provider_matches: true,
        received_matches: true,
      },
      {
        event_id: 'evt_pending',
        resource_id: 'res_p',
        dead: false,
        attempts: 0,
        locked_by: null,
        leased: false,
        due: true,
        guard_bypass: false,
        provider_matches: true,
        received_matches: true,
      },
      {
        event_id: 'evt_waiting',
        resource_id: 'res_w',
        dead: false,
        attempts: 1,
        locked_by: null,
        leased: false,
        due: false,
        guard_bypass: true,
        provider_matches: true,
        received_matches: true,
      },
    ]);
    // The lease's claim time came along too (a lost attempt is recorded from it).
    const claimed = await db.query<{ has_claim: boolean }>("SELECT claimed_at IS NOT NULL AS has_claim FROM inbox_queue WHERE event_id = 'evt_leased'");
    expect(claimed.rows[0]!.has_claim).toBe(true);

    // The records keep their status; the queue columns are gone from them.
    const records = await db.query<{ event_id: string; status: string; attempts: number; final_outcome: string | null }>(
      'SELECT event_id, status, attempts, final_outcome FROM inbox_deliveries ORDER BY event_id',
    );
    expect(records.rows).toEqual([
      { event_id: 'evt_dead', status: 'dead', attempts: 3, final_outcome: null },
      { event_id: 'evt_done', status: 'done', attempts: 1, final_outcome: null },
      { event_id: 'evt_leased', status: 'pending', attempts: 1, final_outcome: null },
      { event_id: 'evt_pending', status: 'pending', attempts: 0, final_outcome: null },
      { event_id: 'evt_waiting', status: 'pending', attempts: 1, final_outcome: null },
    ]);
    const columns = await db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'inbox_deliveries'
         AND column_name IN ('next_attempt_at', 'locked_until', 'locked_by', 'claimed_at', 'guard_bypass')`,
    );
    expect(columns.rows).toEqual([]);
  });

  it('keeps every old attempt, once, in inbox_attempt_history and through the inbox_attempts view', async () => {
    const history = await db.query<(typeof legacyAttempts)[number]>('SELECT event_id, attempt, outcome, error, worker FROM inbox_attempt_history ORDER BY id');
    expect(history.rows).toEqual(legacyAttempts);
    // Migrated settled records carry no final attempt of their own: their settling attempt is
    // already a history row and must not show twice.
    const view = await db.query<(typeof legacyAttempts)[number] & { id: string | number | null }>(
      'SELECT id, event_id, attempt, outcome, error, worker FROM inbox_attempts ORDER BY id',
    );
    expect(view.rows.map(({ id: _, ...rest }) => rest)).toEqual(legacyAttempts);
    expect(view.rows.every((r) => r.id !== null)).toBe(true);
  });

  it('a worker then processes the unleased due delivery to done and leaves the others alone', async () => {
    const config = workerTestConfig();
    config.sources[SOURCE] = { ...config.sources['shop-paymos']!, ordering: undefined };
    const handled: string[] = [];
    const handlers = defineHandlers().on(SOURCE, '*', (event) => {
      handled.push(event.eventId);
    });
    const worker = createInboxWorker(testContext(db, config), { handlers, workerId: 'new-worker' });

    expect(await worker.runOnce()).toBe(1);
    expect(handled).toEqual(['evt_pending']);
    const record = await db.query<{ status: string; attempts: number; final_outcome: string | null; final_worker: string | null; processed: boolean }>(
      "SELECT status, attempts, final_outcome, final_worker, processed_at IS NOT NULL AS processed FROM inbox_deliveries WHERE event_id = 'evt_pending'",
    );
    expect(record.rows[0]).toEqual({ status: 'done', attempts: 1, final_outcome: 'done', final_worker: 'new-worker', processed: true });
    const queued = await db.query<{ event_id: string }>('SELECT event_id FROM inbox_queue ORDER BY event_id');
    expect(queued.rows.map((r) => r.event_id)).toEqual(['evt_dead', 'evt_leased', 'evt_waiting']);
    const attempts = await db.query<{ id: unknown; attempt: number; outcome: string; worker: string | null }>(
      "SELECT id, attempt, outcome, worker FROM inbox_attempts WHERE event_id = 'evt_pending'",
    );
    expect(attempts.rows).toEqual([{ id: null, attempt: 1, outcome: 'done', worker: 'new-worker' }]);

    // Nothing else was due: the lease is live, the retry waits, the dead one is parked.
    expect(await worker.runOnce()).toBe(0);

    // A dead delivery from before the upgrade replays: its settling attempt is already history, so
    // the replay archives nothing more and the log reads on without a duplicate.
    expect(await replayDelivery(db, SOURCE, 'evt_dead', false)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await worker.runOnce()).toBe(1);
    expect(handled).toEqual(['evt_pending', 'evt_dead']);
    const log = await db.query<{ attempt: number; outcome: string; worker: string | null }>(
      "SELECT attempt, outcome, worker FROM inbox_attempts WHERE event_id = 'evt_dead' ORDER BY id",
    );
    expect(log.rows).toEqual([
      { attempt: 1, outcome: 'retry', worker: 'old-worker:1' },
      { attempt: 2, outcome: 'lost', worker: 'old-worker:2' },
      { attempt: 3, outcome: 'dead', worker: 'old-worker:1' },
      { attempt: 1, outcome: 'done', worker: 'new-worker' },
    ]);
  });
});
