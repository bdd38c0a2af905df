import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { createExampleSchema, orderHandlers } from '../examples/orders/handlers.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { createOrder, drain, insertInvoiceDelivery, SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';

const ADMIN = 'dashboard-inbound-admin';
const auth = { authorization: `Bearer ${ADMIN}` };
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

interface Timeline {
  resource_id: string;
  current: Array<{ source: string; state: string; event_id: string }>;
  events: Array<{ source: string; event_id: string; status: string; verdict: string; reason: string | null; attempts: number; provider_at: string }>;
  truncated: boolean;
}

/** What the panel's Inbound and Resource timeline pages read: the event id and attempts filters, the timeline. */
describe('inbound filters and the resource timeline', () => {
  let t: TestDb;
  let app: FastifyInstance;
  const config = workerTestConfig();
  const get = async <T>(url: string) => {
    const res = await app.inject({ method: 'GET', url, headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<T>();
  };

  beforeAll(async () => {
    t = await createTestDb();
    await createExampleSchema(t.db);
    app = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken: ADMIN });
    // One invoice whose events arrive out of order: paid is applied, the earlier confirming comes late
    // and the ordering guard marks it stale; then a third, pending one of the same invoice elsewhere.
    const worker = createInboxWorker(testContext(t.db, config), { handlers: orderHandlers({ source: SOURCE }) });
    await createOrder(t.db, 'ord_tl');
    await insertInvoiceDelivery(t.db, { eventId: 'evt_tl_paid', invoiceId: 'inv_tl', orderId: 'ord_tl', status: 'paid', occurredAt: minutesAgo(1) });
    await drain(worker, t.db);
    await insertInvoiceDelivery(t.db, { eventId: 'evt_tl_conf', invoiceId: 'inv_tl', orderId: 'ord_tl', status: 'confirming', occurredAt: minutesAgo(3) });
    await drain(worker, t.db);
    await insertInvoiceDelivery(
      t.db,
      { eventId: 'evt_tl_other', invoiceId: 'inv_tl', orderId: 'ord_tl', status: 'paid', occurredAt: minutesAgo(2) },
      'other-source',
    );
    await t.db.query(`UPDATE inbox_queue SET attempts = 4 WHERE event_id = 'evt_tl_other'`);
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it("shows a resource's events in provider order, applied or stale with the guard's reason, by source or all", async () => {
    const all = await get<Timeline>('/api/v1/resources/inv_tl/timeline');
    expect(all.events.map((e) => [e.event_id, e.verdict])).toEqual([
      ['evt_tl_conf', 'stale'],
      ['evt_tl_other', 'pending'],
      ['evt_tl_paid', 'applied'],
    ]);
    expect(all.events[0]!.reason).toMatch(/terminal state paid \(event evt_tl_paid\)/);
    expect(all.events[2]!.reason).toBeNull();
    expect(all.current).toEqual([expect.objectContaining({ source: SOURCE, state: 'paid', event_id: 'evt_tl_paid' })]);
    expect(all.truncated).toBe(false);

    const one = await get<Timeline>(`/api/v1/resources/inv_tl/timeline?source=${SOURCE}`);
    expect(one.events.map((e) => e.event_id)).toEqual(['evt_tl_conf', 'evt_tl_paid']);
    expect((await get<Timeline>('/api/v1/resources/inv_none/timeline')).events).toEqual([]);
    const viewerless = await app.inject({ method: 'GET', url: '/api/v1/resources/inv_tl/timeline' });
    expect(viewerless.statusCode).toBe(401);
  });

  it('filters the list, the dry run and the export by event id (with or without the source) and by attempts ≥ N', async () => {
    const ids = (page: { items: Array<{ event_id: string }> }) => page.items.map((i) => i.event_id);
    expect(ids(await get('/api/v1/inbox?event_id=evt_tl_conf'))).toEqual(['evt_tl_conf']);
    expect(ids(await get(`/api/v1/inbox?event_id=evt_tl_conf&source=${SOURCE}`))).toEqual(['evt_tl_conf']);
    expect(ids(await get('/api/v1/inbox?event_id=evt_tl_conf&source=other-source'))).toEqual([]);
    // Attempts count the one in flight (the queue's) while a delivery is open.
    expect(ids(await get('/api/v1/inbox?min_attempts=2'))).toEqual(['evt_tl_other']);
    expect(ids(await get('/api/v1/inbox?min_attempts=1&status=stale'))).toEqual(['evt_tl_conf']);
    expect((await get<{ items: unknown[] }>('/api/v1/inbox?min_attempts=0')).items).toHaveLength(3);
    const dry = await app.inject({ method: 'POST', url: '/api/v1/jobs/dry-run', headers: auth, payload: { filter: { min_attempts: 1, source: SOURCE } } });
    expect(dry.json()).toEqual({ matching: 2 });
    const csv = await app.inject({ method: 'GET', url: '/api/v1/inbox/export.csv?event_id=evt_tl_paid', headers: auth });
    expect(csv.body.trim().split('\n')).toHaveLength(2);
    expect(csv.body).toContain('evt_tl_paid');
    // A replay by filter reaches settled deliveries through the same conditions.
    const replay = await app.inject({
      method: 'POST',
      url: '/api/v1/inbox/replay',
      headers: auth,
      payload: { status: 'stale', min_attempts: 1, event_id: 'evt_tl_conf' },
    });
    expect(replay.json()).toEqual({ replayed: 1 });
    const refused = await app.inject({ method: 'GET', url: '/api/v1/inbox?min_attempts=-1', headers: auth });
    expect(refused.statusCode).toBe(400);
  });
});
