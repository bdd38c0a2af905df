import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { countRows } from './helpers/receiver.js';
import { InboxBatcher, receiverInFlight, type BatcherOptions } from '../src/receiver/batcher.js';
import { parseConfig } from '../src/config/load.js';
import { ReceiverMetrics } from '../src/receiver/metrics.js';
import type { InboxDeliveryRow } from '../src/store/sql/inbox/insert-deliveries.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { isTekilError } from '../src/errors.js';

function row(eventId: string, extra: Partial<InboxDeliveryRow> = {}): InboxDeliveryRow {
  return {
    source: 'src',
    eventId,
    resourceId: null,
    eventType: 'thing.happened',
    occurredAt: null,
    body: Buffer.from(`{"id":"${eventId}"}`),
    contentType: 'application/json',
    headers: '{}',
    ...extra,
  };
}

async function batchStats(metrics: ReceiverMetrics): Promise<{ count: number; sum: number }> {
  const values = (await metrics.batchRows.get()).values;
  return {
    count: values.find((v) => v.metricName === 'tekil_inbox_batch_rows_count')?.value ?? 0,
    sum: values.find((v) => v.metricName === 'tekil_inbox_batch_rows_sum')?.value ?? 0,
  };
}

describe('group-commit batcher', () => {
  let t: TestDb;
  let metrics: ReceiverMetrics;
  const make = (options: Partial<BatcherOptions> = {}) =>
    new InboxBatcher(t.db, { maxRows: 500, maxBytes: 1 << 20, queueMaxRows: 10_000, metrics, ...options });

  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close().catch(() => {}); // on PGlite the last test closed it already
  });
  beforeEach(async () => {
    metrics = new ReceiverMetrics(new Registry());
    await t.db.query('DELETE FROM inbox_deliveries');
  });

  it('writes the first row at once and gathers the rest while that insert is in flight', async () => {
    const b = make();
    const first = b.enqueue(row('a0'));
    const rest = Array.from({ length: 99 }, (_, i) => b.enqueue(row(`a${i + 1}`)));
    expect(await Promise.all([first, ...rest])).toEqual(Array(100).fill('accepted'));
    expect(await batchStats(metrics)).toEqual({ count: 2, sum: 100 });
    expect(await countRows(t.db)).toBe(100);
  });

  it('gathering a turn (the embedded store): everything enqueued in one turn of the event loop goes in one INSERT', async () => {
    const b = make({ gatherTurn: true });
    const all = Array.from({ length: 100 }, (_, i) => b.enqueue(row(`t${i}`)));
    expect(await Promise.all(all)).toEqual(Array(100).fill('accepted'));
    expect(await batchStats(metrics)).toEqual({ count: 1, sum: 100 });
    expect(await countRows(t.db)).toBe(100);
  });

  it('caps a batch by rows and by bytes', async () => {
    const byRows = make({ maxRows: 10 });
    await Promise.all(Array.from({ length: 36 }, (_, i) => byRows.enqueue(row(`r${i}`))));
    expect(await batchStats(metrics)).toEqual({ count: 5, sum: 36 }); // 1, 10, 10, 10, 5

    metrics = new ReceiverMetrics(new Registry());
    const byBytes = make({ maxBytes: 250 });
    const body = Buffer.alloc(100, 0x61);
    await Promise.all(Array.from({ length: 7 }, (_, i) => byBytes.enqueue(row(`b${i}`, { body }))));
    expect(await batchStats(metrics)).toEqual({ count: 4, sum: 7 }); // 1, 2, 2, 2
    expect(await countRows(t.db)).toBe(43);
  });

  it('copies of one id inside a batch: one accepted, the rest duplicates; known ids are duplicates', async () => {
    const b = make();
    await b.enqueue(row('known'));
    const blocker = b.enqueue(row('blocker'));
    const copies = Array.from({ length: 5 }, () => b.enqueue(row('same')));
    const known = b.enqueue(row('known'));
    const outcomes = await Promise.all(copies);
    expect(outcomes.filter((o) => o === 'accepted')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(4);
    expect(await known).toBe('duplicate');
    expect(await blocker).toBe('accepted');
    expect(await countRows(t.db)).toBe(3);
  });

  it('falls back to per-row inserts so one bad row does not fail its neighbours', async () => {
    const b = make();
    const blocker = b.enqueue(row('ok0'));
    const good = [b.enqueue(row('ok1')), b.enqueue(row('ok2'))];
    const bad = b.enqueue(row('bad', { headers: '{not json' })).catch((err: unknown) => err);
    const good2 = b.enqueue(row('ok3'));
    expect(await Promise.all([blocker, ...good, good2])).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    const err = await bad;
    expect(isTekilError(err, 'STORE_REJECTED')).toBe(true);
    expect((await metrics.flushErrors.get()).values[0]?.value).toBe(1);
    expect(await countRows(t.db)).toBe(4);
    expect(await countRows(t.db, "event_id = 'bad'")).toBe(0);
  });

  it('refuses rows beyond the queue cap with OVERLOADED', async () => {
    const b = make({ queueMaxRows: 5 });
    const inFlight = b.enqueue(row('q0'));
    const waiting = Array.from({ length: 5 }, (_, i) => b.enqueue(row(`q${i + 1}`)));
    const refused = await b.enqueue(row('q6')).catch((err: unknown) => err);
    expect(isTekilError(refused, 'OVERLOADED')).toBe(true);
    expect((refused as { statusCode: number }).statusCode).toBe(503);
    await Promise.all([inFlight, ...waiting]);
    expect(await countRows(t.db)).toBe(6);

    const byBytes = make({ queueMaxBytes: 250 });
    const body = Buffer.alloc(100, 0x62);
    const first = byBytes.enqueue(row('qb0', { body }));
    const fits = [byBytes.enqueue(row('qb1', { body })), byBytes.enqueue(row('qb2', { body }))];
    const tooMuch = await byBytes.enqueue(row('qb3', { body })).catch((err: unknown) => err);
    expect(isTekilError(tooMuch, 'OVERLOADED')).toBe(true);
    await Promise.all([first, ...fits]);
    expect(await countRows(t.db)).toBe(9);
  });

  it('stop() writes everything queued, then refuses new rows', async () => {
    const b = make({ maxRows: 7 });
    const pending = Array.from({ length: 40 }, (_, i) => b.enqueue(row(`s${i}`)));
    await b.stop();
    expect(await countRows(t.db)).toBe(40);
    expect(await Promise.all(pending)).toEqual(Array(40).fill('accepted'));
    const late = await b.enqueue(row('late')).catch((err: unknown) => err);
    expect(isTekilError(late, 'SHUTTING_DOWN')).toBe(true);
  });

  it('answers STORE_UNAVAILABLE for every row when the store cannot be reached', async () => {
    // Last test of the file: on PGlite the test's own store is closed (opening another costs seconds).
    const gone = onPostgres ? createPostgresDb({ connectionString: t.url!, max: 1 }) : t.db;
    await gone.close();
    const b = new InboxBatcher(gone, { maxRows: 500, maxBytes: 1 << 20, queueMaxRows: 100, metrics });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => b.enqueue(row(`u${i}`)).catch((err: unknown) => err)));
    expect(results.every((err) => isTekilError(err, 'STORE_UNAVAILABLE'))).toBe(true);
  });
});

describe('INSERTs in flight', () => {
  it('defaults to one on Postgres and two on the embedded store; a setting wins on both', () => {
    const unset = parseConfig({}).receiver;
    expect(receiverInFlight(unset, 'postgres')).toBe(1);
    expect(receiverInFlight(unset, 'pglite')).toBe(2);
    const set = parseConfig({ receiver: { max_in_flight: 3 } }).receiver;
    expect(receiverInFlight(set, 'postgres')).toBe(3);
    expect(receiverInFlight(set, 'pglite')).toBe(3);
  });
});
