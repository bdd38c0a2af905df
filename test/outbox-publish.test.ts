import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayMessage } from '../src/outbox/operations.js';
import { publish } from '../src/outbox/publish.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

describe('outbox: publishing inside the caller’s transaction', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let dispatcher: Dispatcher;
  let sinkA: Sink;
  let sinkB: Sink;
  let callback: Sink;
  let epA: string;

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db, {});
    [sinkA, sinkB, callback] = await Promise.all([startSink(), startSink(), startSink()]);
    epA = (await h.endpoints.create(t.db, { url: sinkA.url, event_types: ['invoice.*'] })).endpoint.id;
    await h.endpoints.create(t.db, { url: sinkB.url, event_types: ['invoice.paid', 'payout.sent'] });
    await h.endpoints.create(t.db, { url: sinkB.url, event_types: ['payout.*'] }); // not subscribed to invoices
    await t.db.exec('CREATE TABLE invoices (id text PRIMARY KEY, status text NOT NULL)');
    dispatcher = h.newDispatcher();
    await dispatcher.start();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all([sinkA?.close(), sinkB?.close(), callback?.close()]);
    await t?.close();
  });

  it('sends nothing when the transaction rolls back', async () => {
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query("INSERT INTO invoices (id, status) VALUES ('inv_rolled', 'paid')");
        await publish(tx, { type: 'invoice.paid', resourceId: 'inv_rolled', data: { invoice_id: 'inv_rolled' } });
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    const { rows } = await t.db.query<{ n: number }>('SELECT (SELECT count(*) FROM outbox_messages) + (SELECT count(*) FROM outbox_deliveries) AS n');
    expect(Number(rows[0]!.n)).toBe(0);
    // A barrier instead of a pause: a message committed afterwards reaches both endpoints, and it is
    // the only thing they ever received.
    const after = await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', resourceId: 'inv_after', data: { invoice_id: 'inv_after' } }));
    await Promise.all([sinkA.waitFor(1), sinkB.waitFor(1)]);
    expect(sinkA.requests.map((r) => r.headers['webhook-id'])).toEqual([after.id]);
    expect(sinkB.requests.map((r) => r.headers['webhook-id'])).toEqual([after.id]);
    sinkA.requests.length = 0;
    sinkB.requests.length = 0;
  });

  it('sends once per subscribed endpoint and extra destination, all with the same event id', async () => {
    const result = await t.db.transaction(async (tx) => {
      await tx.query("INSERT INTO invoices (id, status) VALUES ('inv_1', 'paid')");
      return publish(tx, {
        type: 'invoice.paid',
        resourceId: 'inv_1',
        data: { invoice_id: 'inv_1', amount: '10.00' },
        extraDestinations: [{ url: callback.url, endpointId: epA }],
      });
    });
    expect(result.id).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(result.deliveries).toBe(3);
    await Promise.all([sinkA.waitFor(1), sinkB.waitFor(1), callback.waitFor(1)]);
    await waitUntil(async () => {
      const { rows } = await t.db.query<{ n: number }>("SELECT count(*) AS n FROM outbox_deliveries WHERE status = 'succeeded' AND message_id = $1", [
        result.id,
      ]);
      return Number(rows[0]!.n) === 3;
    });
    // Each send is recorded as an attempt with its outcome: three attempts, three requests, no more.
    const recorded = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM outbox_attempts WHERE message_id = $1', [result.id]);
    expect(Number(recorded.rows[0]!.n)).toBe(3);
    const all = [...sinkA.requests, ...sinkB.requests, ...callback.requests];
    expect(all).toHaveLength(3);
    for (const req of all) {
      expect(req.headers['webhook-id']).toBe(result.id);
      const body = JSON.parse(req.body.toString('utf8')) as { event_id: string; type: string; resource_id: string; data: unknown };
      expect(body).toMatchObject({ event_id: result.id, type: 'invoice.paid', resource_id: 'inv_1', data: { invoice_id: 'inv_1' } });
    }
    // exact bytes: what was stored is what every destination received
    const stored = await t.db.query<{ payload: Uint8Array }>('SELECT payload FROM outbox_messages WHERE id = $1', [result.id]);
    for (const req of all) expect(req.body.equals(Buffer.from(stored.rows[0]!.payload))).toBe(true);
    const attempts = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM outbox_attempts WHERE message_id = $1 AND succeeded', [result.id]);
    expect(Number(attempts.rows[0]!.n)).toBe(3);
  });

  it('sends a caller’s exact body as-is, carrying the id tekil assigned, to every destination and in a replay', async () => {
    for (const sink of [sinkA, sinkB, callback]) sink.requests.length = 0;
    const result = await t.db.transaction(async (tx) => {
      await tx.query("INSERT INTO invoices (id, status) VALUES ('inv_raw', 'paid')");
      return publish(tx, {
        type: 'invoice.paid',
        resourceId: 'inv_raw',
        // Not JSON tekil would write: key order, spacing and a trailing newline must survive untouched.
        body: (id) => Buffer.from(`{"event_id": "${id}",  "event_type":"invoice.paid","data":{"invoice_id":"inv_raw"}}\n`),
        extraDestinations: [{ url: callback.url, endpointId: epA }],
      });
    });
    expect(result.deliveries).toBe(3);
    await Promise.all([sinkA.waitFor(1), sinkB.waitFor(1), callback.waitFor(1)]);
    const expected = `{"event_id": "${result.id}",  "event_type":"invoice.paid","data":{"invoice_id":"inv_raw"}}\n`;
    const all = [...sinkA.requests, ...sinkB.requests, ...callback.requests];
    expect(all).toHaveLength(3);
    for (const req of all) {
      expect(req.body.toString('utf8')).toBe(expected);
      expect(req.headers['webhook-id']).toBe(result.id);
    }
    await waitUntil(async () => {
      const { rows } = await t.db.query<{ n: number }>("SELECT count(*) AS n FROM outbox_deliveries WHERE status = 'succeeded' AND message_id = $1", [
        result.id,
      ]);
      return Number(rows[0]!.n) === 3;
    });
    for (const sink of [sinkA, sinkB, callback]) sink.requests.length = 0;
    await replayMessage(t.db, result.id);
    await Promise.all([sinkA.waitFor(1), sinkB.waitFor(1), callback.waitFor(1)]);
    for (const req of [...sinkA.requests, ...sinkB.requests, ...callback.requests]) expect(req.body.toString('utf8')).toBe(expected);
    sinkA.requests.length = 0;
    sinkB.requests.length = 0;
    callback.requests.length = 0;
  });

  it('returns the first message for a repeated idempotency key', async () => {
    const first = await t.db.transaction((tx) => publish(tx, { type: 'payout.sent', data: {}, idempotencyKey: 'k-1' }));
    const again = await t.db.transaction((tx) => publish(tx, { type: 'payout.sent', data: {}, idempotencyKey: 'k-1' }));
    expect(again).toEqual({ id: first.id, deliveries: 0, duplicate: true });
    expect(first.deliveries).toBe(2);
  });

  it.skipIf(!onPostgres)('works with the application’s own node-postgres client', async () => {
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query("INSERT INTO invoices (id, status) VALUES ('inv_pg_rb', 'paid')");
      await publish(client, { type: 'invoice.paid', resourceId: 'inv_pg_rb', data: {} });
      await client.query('ROLLBACK');
      await client.query('BEGIN');
      await client.query("INSERT INTO invoices (id, status) VALUES ('inv_pg', 'paid')");
      const { id } = await publish(client, { type: 'invoice.paid', resourceId: 'inv_pg', data: {} });
      await client.query('COMMIT');
      await waitUntil(() => sinkA.requests.some((r) => r.headers['webhook-id'] === id));
      const { rows } = await t.db.query<{ n: number }>("SELECT count(*) AS n FROM outbox_messages WHERE resource_id = 'inv_pg_rb'");
      expect(Number(rows[0]!.n)).toBe(0);
    } finally {
      await client.end();
    }
  });
});
