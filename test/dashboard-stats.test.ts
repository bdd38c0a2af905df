import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverConfig, signPaymos, testContext } from './helpers/receiver.js';

const ADMIN = 'dashboard-stats-admin';
const auth = { authorization: `Bearer ${ADMIN}` };

interface InboxStats {
  minutes: Array<{ minute: string; received: number; done: number; stale: number; dead: number }>;
  review_queue: number;
  receiver: {
    accepted: number;
    duplicate: number;
    rejected: number;
    ack_p50_ms: number | null;
    ack_p99_ms: number | null;
    minutes: Array<{ minute: string; accepted: number; duplicate: number; rejected: number }>;
  } | null;
}

/** Stats from a receiver + api process: webhooks are posted, settled in the store, then counted. */
describe('dashboard stats and alerting gauges', () => {
  let t: TestDb;
  let app: FastifyInstance;

  const post = (eventId: string, signed = true) => {
    const body = paymosBody(eventId);
    return app.inject({ method: 'POST', url: '/in/shop', payload: body, headers: { 'content-type': 'application/json', ...(signed ? signPaymos(body) : {}) } });
  };

  beforeAll(async () => {
    t = await createTestDb();
    app = await buildApp({ ctx: testContext(t.db, receiverConfig()), roles: new Set(['receiver', 'api']), adminToken: ADMIN });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('counts received, settled, duplicate and refused deliveries, the review queue and ack latency', async () => {
    for (const id of ['evt_s1', 'evt_s2', 'evt_s3', 'evt_s4']) expect((await post(id)).statusCode).toBe(200);
    expect((await post('evt_s1')).statusCode).toBe(200); // a duplicate
    expect((await post('evt_s5', false)).statusCode).toBe(401); // refused: no signature
    // Settle three as a worker would: two done, one dead (parked in the review queue).
    await t.db.query(`UPDATE inbox_deliveries SET status = 'done', processed_at = now(), attempts = 1 WHERE event_id IN ('evt_s1', 'evt_s2')`);
    await t.db.query(`UPDATE inbox_deliveries SET status = 'dead', last_attempt_at = now(), attempts = 3 WHERE event_id = 'evt_s3'`);
    await t.db.query(`UPDATE inbox_queue SET dead = true WHERE event_id = 'evt_s3'`);

    const res = await app.inject({ method: 'GET', url: '/api/v1/stats/inbox?window=10m', headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    const stats = res.json() as InboxStats;
    expect(stats.minutes.length).toBeGreaterThanOrEqual(10);
    expect(stats.minutes.length).toBeLessThanOrEqual(12);
    const sum = (k: 'received' | 'done' | 'dead' | 'stale') => stats.minutes.reduce((n, m) => n + m[k], 0);
    expect({ received: sum('received'), done: sum('done'), dead: sum('dead'), stale: sum('stale') }).toEqual({ received: 4, done: 2, dead: 1, stale: 0 });
    expect(stats.review_queue).toBe(1);
    expect(stats.receiver).toMatchObject({ accepted: 4, duplicate: 1, rejected: 1 });
    expect(stats.receiver?.ack_p50_ms).toBeGreaterThan(0);
    // The receiver's answers per minute cover the same minutes as the stored counts.
    expect(stats.receiver?.minutes.map((m) => m.minute)).toEqual(stats.minutes.map((m) => m.minute));
    const perMinute = (k: 'accepted' | 'duplicate' | 'rejected') => stats.receiver!.minutes.reduce((n, m) => n + m[k], 0);
    expect([perMinute('accepted'), perMinute('duplicate'), perMinute('rejected')]).toEqual([4, 1, 1]);
    expect(stats.receiver!.ack_p99_ms!).toBeGreaterThanOrEqual(stats.receiver!.ack_p50_ms!);
  });

  it('the window is bounded: more than a day is refused', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/stats/inbox?window=2d', headers: auth });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION_FAILED' });
  });

  it('per endpoint: success rate and latency of the attempts in the window; failed deliveries', async () => {
    await t.db.query(`INSERT INTO endpoints (id, url, timeout_ms, max_in_flight) VALUES ('ep_stats', 'https://example.com/h', 5000, 4)`);
    await t.db.query(`INSERT INTO outbox_messages (id, event_type, payload) VALUES ('msg_stats', 'invoice.paid', '\\x7b7d')`);
    const { rows } = await t.db.query<{ id: string }>(
      `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts) VALUES ('default', 'msg_stats', 'ep_stats', 'failed', 4) RETURNING id`,
    );
    await t.db.query(`INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) VALUES ('default', $1, 'ep_stats', true)`, [rows[0]!.id]);
    // ep_stats: a success 5 minutes ago, then failures from 4 minutes ago on. ep_healthy: failed, then recovered.
    const attempts: Array<[string, number, number, boolean]> = [
      ['ep_stats', 5, 10, true],
      ['ep_stats', 4, 20, false],
      ['ep_stats', 3, 30, false],
      ['ep_stats', 2, 1000, false],
      ['ep_healthy', 3, 40, false],
      ['ep_healthy', 2, 50, true],
    ];
    await t.db.query(`INSERT INTO endpoints (id, url, timeout_ms, max_in_flight) VALUES ('ep_healthy', 'https://example.com/ok', 5000, 4)`);
    // One "now" for every attempt: each INSERT is its own transaction, and a second may turn between two.
    const now = (await t.db.query<{ now: Date }>(`SELECT date_trunc('second', now()) AS now`)).rows[0]!.now;
    for (const [i, [endpoint, minutesAgo, ms, ok]] of attempts.entries()) {
      await t.db.query(
        `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, status_code)
         VALUES ('default', $1, 'msg_stats', $2, $3, 'https://example.com/h', $8::timestamptz - $4 * interval '1 minute', $5, $6, $7)`,
        [rows[0]!.id, endpoint, i + 1, minutesAgo, ms, ok, ok ? 200 : 500, now],
      );
    }
    const res = await app.inject({ method: 'GET', url: '/api/v1/stats/outbox?window=1h', headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { endpoints: Array<Record<string, unknown>>; failed_deliveries: number };
    const at = (e: Record<string, unknown>, field: string) => Date.parse(String(e[field]));
    const [healthy, failing] = body.endpoints;
    expect(failing).toMatchObject({ endpoint_id: 'ep_stats', attempts: 4, succeeded: 1, success_rate: 0.25, p50_ms: 25 });
    expect(failing!.p99_ms).toBeGreaterThan(900);
    // Failing since the first failure after the last success; its latest attempt two minutes ago.
    expect(at(failing!, 'failing_since') - at(failing!, 'last_success_at')).toBe(60_000);
    expect(at(failing!, 'last_attempt_at') - at(failing!, 'failing_since')).toBe(120_000);
    expect(healthy).toMatchObject({ endpoint_id: 'ep_healthy', attempts: 2, succeeded: 1, failing_since: null });
    expect(at(healthy!, 'last_success_at')).toBe(at(healthy!, 'last_attempt_at'));
    expect(body.failed_deliveries).toBe(1);
  });

  it('/metrics carries the review-queue and failed-delivery gauges, read from the store at scrape', async () => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/^tekil_review_queue_size 1$/m);
    expect(text).toMatch(/^tekil_outbox_failed_deliveries 1$/m);
    await t.db.query(`UPDATE inbox_queue SET dead = false WHERE event_id = 'evt_s3'`);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^tekil_review_queue_size 0$/m);
  });
});
