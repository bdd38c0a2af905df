import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';
import type { Queryable } from '../src/store/db.js';
import { PermanentError, defineHandlers } from '../src/worker/handlers.js';
import { replayDelivery, showDelivery, type InboxAttempt } from '../src/inbox/index.js';
import { createInboxWorker } from '../src/worker/worker.js';

const SOURCE = 'attempt-log';

type ViewAttempt = InboxAttempt & { id: unknown };

async function viewAttempts(db: Queryable, eventId: string): Promise<ViewAttempt[]> {
  const res = await db.query<ViewAttempt>(
    'SELECT id, attempt, worker, started_at, finished_at, duration_ms, outcome, error FROM inbox_attempts WHERE source = $1 AND event_id = $2 ORDER BY id',
    [SOURCE, eventId],
  );
  return res.rows;
}

async function historyOutcomes(db: Queryable, eventId: string): Promise<Array<{ attempt: number; outcome: string; worker: string | null }>> {
  const res = await db.query<{ attempt: number; outcome: string; worker: string | null }>(
    'SELECT attempt, outcome, worker FROM inbox_attempt_history WHERE source = $1 AND event_id = $2 ORDER BY id',
    [SOURCE, eventId],
  );
  return res.rows;
}

interface FinalAttempt {
  status: string;
  attempts: number;
  last_attempt_at: Date | null;
  last_error: string | null;
  final_outcome: string | null;
  final_worker: string | null;
  final_duration_ms: number | null;
}

async function finalAttempt(db: Queryable, eventId: string): Promise<FinalAttempt> {
  const res = await db.query<FinalAttempt>(
    `SELECT status, attempts, last_attempt_at, last_error, final_outcome, final_worker, final_duration_ms
     FROM inbox_deliveries WHERE source = $1 AND event_id = $2`,
    [SOURCE, eventId],
  );
  return res.rows[0]!;
}

async function queueRow(db: Queryable, eventId: string) {
  const res = await db.query<{ dead: boolean; attempts: number; guard_bypass: boolean; locked_by: string | null }>(
    'SELECT dead, attempts, guard_bypass, locked_by FROM inbox_queue WHERE source = $1 AND event_id = $2',
    [SOURCE, eventId],
  );
  return res.rows[0];
}

/**
 * The attempt log: retried and superseded attempts are rows of inbox_attempt_history, the settling
 * attempt lives on the delivery record, and the inbox_attempts view shows them as one ordered list.
 */
describe('inbox attempt log', () => {
  let t: TestDb;
  const config = workerTestConfig();
  config.sources[SOURCE] = { ...config.sources['shop-paymos']!, ordering: undefined };
  /** What the handler does next, per event id: a failure to throw, or a pause before succeeding. */
  const script = new Map<string, Array<Error | number>>();
  const handlers = defineHandlers().on(SOURCE, '*', async (event) => {
    const step = script.get(event.eventId)?.shift() ?? 0;
    if (step instanceof Error) throw step;
    // A pause the attempt's duration records (work, not a barrier).
    if (step > 0) await new Promise((r) => setTimeout(r, step));
    return `ref_${event.eventId}`;
  });

  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => t?.close());

  async function insert(eventId: string): Promise<void> {
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body) VALUES ($1, $2, $3, 'thing.updated', now(), '\\x7b7d')`,
      [SOURCE, eventId, `res_${eventId}`],
    );
  }

  async function makeDue(eventId: string): Promise<void> {
    await t.db.query('UPDATE inbox_queue SET next_attempt_at = now() WHERE source = $1 AND event_id = $2', [SOURCE, eventId]);
  }

  it('a retry then a success: the retry is history, the success is the record, the view lists both in order', async () => {
    const worker = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'worker-a' });
    await insert('evt_r');
    script.set('evt_r', [new Error('upstream timed out'), 15]);

    expect(await worker.runOnce()).toBe(1);
    expect(await finalAttempt(t.db, 'evt_r')).toMatchObject({
      status: 'pending',
      attempts: 1,
      final_outcome: null,
      final_worker: null,
      final_duration_ms: null,
    });
    await makeDue('evt_r');
    expect(await worker.runOnce()).toBe(1);

    const view = await viewAttempts(t.db, 'evt_r');
    expect(view.map((a) => [a.attempt, a.outcome, a.worker, a.error])).toEqual([
      [1, 'retry', 'worker-a', 'Error: upstream timed out'],
      [2, 'done', 'worker-a', null],
    ]);
    const [retry, done] = view as [ViewAttempt, ViewAttempt];
    expect(retry.id).not.toBeNull();
    expect(done.id).toBeNull();
    expect(done.duration_ms).toBeGreaterThanOrEqual(10);
    expect(done.finished_at.getTime()).toBeGreaterThanOrEqual(done.started_at.getTime());
    expect(done.finished_at.getTime() - done.started_at.getTime()).toBe(done.duration_ms);
    expect(done.started_at.getTime()).toBeGreaterThanOrEqual(retry.finished_at.getTime());
    expect(await historyOutcomes(t.db, 'evt_r')).toEqual([{ attempt: 1, outcome: 'retry', worker: 'worker-a' }]);

    const record = await finalAttempt(t.db, 'evt_r');
    expect(record).toMatchObject({ status: 'done', attempts: 2, final_outcome: 'done', final_worker: 'worker-a', final_duration_ms: done.duration_ms });
    expect(record.last_attempt_at!.getTime()).toBe(done.started_at.getTime());
    expect(await queueRow(t.db, 'evt_r')).toBeUndefined();
  });

  it('a forced replay moves the settling attempt into history; the next one settles on the record', async () => {
    const replayed = await replayDelivery(t.db, SOURCE, 'evt_r', true);
    expect(replayed).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await historyOutcomes(t.db, 'evt_r')).toEqual([
      { attempt: 1, outcome: 'retry', worker: 'worker-a' },
      { attempt: 2, outcome: 'done', worker: 'worker-a' },
    ]);
    expect(await finalAttempt(t.db, 'evt_r')).toMatchObject({
      status: 'pending',
      attempts: 0,
      final_outcome: null,
      final_worker: null,
      final_duration_ms: null,
    });
    expect(await queueRow(t.db, 'evt_r')).toEqual({ dead: false, attempts: 0, guard_bypass: true, locked_by: null });
    // While the replay waits for a worker, the log still shows both earlier attempts (now both history).
    const between = await viewAttempts(t.db, 'evt_r');
    expect(between.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'retry'],
      [2, 'done'],
    ]);
    expect(between.every((a) => a.id !== null)).toBe(true);

    const other = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'worker-b' });
    script.set('evt_r', [12]);
    expect(await other.runOnce()).toBe(1);

    const view = await viewAttempts(t.db, 'evt_r');
    expect(view.map((a) => [a.attempt, a.outcome, a.worker, a.error])).toEqual([
      [1, 'retry', 'worker-a', 'Error: upstream timed out'],
      [2, 'done', 'worker-a', null],
      [1, 'done', 'worker-b', null],
    ]);
    // The archived done attempt kept its times and duration from the record.
    expect(view[1]!.finished_at.getTime() - view[1]!.started_at.getTime()).toBe(view[1]!.duration_ms);
    expect(await historyOutcomes(t.db, 'evt_r')).toHaveLength(2);

    const last = view[2]!;
    expect(last.id).toBeNull();
    const record = await finalAttempt(t.db, 'evt_r');
    expect(record).toMatchObject({ status: 'done', attempts: 1, final_outcome: 'done', final_worker: 'worker-b', final_duration_ms: last.duration_ms });
    expect(record.final_duration_ms).toBeGreaterThanOrEqual(10);
    expect(record.last_attempt_at!.getTime()).toBe(last.started_at.getTime());

    const detail = await showDelivery(t.db, SOURCE, 'evt_r');
    expect(detail.status).toBe('done');
    expect(detail.attempt_history).toEqual(view.map(({ id: _, ...attempt }) => attempt));
  });

  it('a permanent failure is dead with its error in the log; a replay resets the queue row and the fix settles it', async () => {
    const worker = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'worker-c' });
    await insert('evt_p');
    script.set('evt_p', [new PermanentError('invoice inv_9 is unknown here')]);

    expect(await worker.runOnce()).toBe(1);
    expect(await finalAttempt(t.db, 'evt_p')).toMatchObject({ status: 'dead', attempts: 1, final_outcome: 'dead', final_worker: 'worker-c' });
    expect(await queueRow(t.db, 'evt_p')).toEqual({ dead: true, attempts: 1, guard_bypass: false, locked_by: null });
    const dead = await viewAttempts(t.db, 'evt_p');
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ id: null, attempt: 1, outcome: 'dead', worker: 'worker-c' });
    expect(dead[0]!.error).toContain('invoice inv_9 is unknown here');
    expect(await historyOutcomes(t.db, 'evt_p')).toEqual([]);

    expect(await replayDelivery(t.db, SOURCE, 'evt_p', false)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await queueRow(t.db, 'evt_p')).toEqual({ dead: false, attempts: 0, guard_bypass: false, locked_by: null });
    expect(await finalAttempt(t.db, 'evt_p')).toMatchObject({ status: 'pending', attempts: 0, final_outcome: null });
    const archived = await t.db.query<{ outcome: string; error: string | null }>(
      'SELECT outcome, error FROM inbox_attempt_history WHERE source = $1 AND event_id = $2',
      [SOURCE, 'evt_p'],
    );
    expect(archived.rows).toHaveLength(1);
    expect(archived.rows[0]!.outcome).toBe('dead');
    expect(archived.rows[0]!.error).toContain('invoice inv_9 is unknown here');

    // The fix is deployed: the handler now succeeds.
    expect(await worker.runOnce()).toBe(1);
    expect(await finalAttempt(t.db, 'evt_p')).toMatchObject({ status: 'done', attempts: 1, final_outcome: 'done', final_worker: 'worker-c' });
    expect(await queueRow(t.db, 'evt_p')).toBeUndefined();
    const view = await viewAttempts(t.db, 'evt_p');
    expect(view.map((a) => [a.attempt, a.outcome, a.id === null])).toEqual([
      [1, 'dead', false],
      [1, 'done', true],
    ]);
    expect(view[0]!.error).toContain('invoice inv_9 is unknown here');
    expect(view[1]!.error).toBeNull();
  });
});
