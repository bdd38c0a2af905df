import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateOnce } from '../src/alerts/evaluator.js';
import { parseConfig } from '../src/config/load.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { publish } from '../src/outbox/publish.js';
import { createTenant } from '../src/tenants/tenants.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

const alerts = parseConfig({ alerts: { enabled: true, rules: { endpoint_failing: { failures: 2 } } } }).alerts;
const OPERATIONAL = ['message.attempts_exhausted', 'endpoint.*'];

describe('operational webhooks go to the tenant concerned: message.attempts_exhausted, endpoint.failing', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let dispatcher: Dispatcher | undefined;
  let failing: Sink;
  let tenantOps: Sink;
  let defaultOps: Sink;
  let failingEndpoint: string;

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db);
    failing = await startSink(() => ({ status: 503 }));
    tenantOps = await startSink();
    defaultOps = await startSink();
    await createTenant(t.db, { id: 'm_ops', name: 'A merchant' });
    // Subscribed to every type (no event types): it is also sent the announcement of its own failure,
    // which fails as well, and must not be announced again.
    failingEndpoint = (await h.endpoints.create(t.db, { tenant_id: 'm_ops', url: failing.url, ladder: ['100s'] })).endpoint.id;
    await h.endpoints.create(t.db, { tenant_id: 'm_ops', url: tenantOps.url, event_types: OPERATIONAL });
    // The default tenant's operator endpoint: another tenant's problems are none of its business.
    await h.endpoints.create(t.db, { url: defaultOps.url, event_types: OPERATIONAL });
    dispatcher = h.newDispatcher({ announceExhausted: true });
    await dispatcher.start();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all([failing?.close(), tenantOps?.close(), defaultOps?.close()]);
    await t?.close();
  });

  const exhaustedMessages = async () =>
    (
      await t.db.query<{ id: string; tenant_id: string; resource_id: string | null; idempotency_key: string; deliveries: number }>(
        `SELECT m.id, m.tenant_id, m.resource_id, m.idempotency_key, (SELECT count(*)::int FROM outbox_deliveries d WHERE d.message_id = m.id) AS deliveries
         FROM outbox_messages m WHERE m.event_type = 'message.attempts_exhausted' ORDER BY m.id`,
      )
    ).rows;

  it('a delivery that exhausts its ladder is announced once, signed, to its tenant only, and the announcement is never announced', async () => {
    const published = await t.db.transaction((tx) =>
      publish(tx, { tenantId: 'm_ops', type: 'invoice.paid', resourceId: 'inv_ops_1', data: { id: 'inv_ops_1' } }),
    );
    const { rows: deliveries } = await t.db.query<{ id: string }>('SELECT id::text AS id FROM outbox_deliveries WHERE message_id = $1', [published.id]);
    expect(deliveries).toHaveLength(1);
    const deliveryId = deliveries[0]!.id;

    await waitUntil(() => tenantOps.requests.length >= 1, 20_000);
    const [message] = await exhaustedMessages();
    expect(message).toMatchObject({ tenant_id: 'm_ops', resource_id: 'inv_ops_1', idempotency_key: `tekil-attempts-exhausted:${deliveryId}` });
    // The failing endpoint (subscribed to everything) and the tenant's operator endpoint.
    expect(message!.deliveries).toBe(2);

    const request = tenantOps.requests[0]!;
    expect(request.headers['webhook-signature']).toMatch(/^v1,/);
    const body = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
    expect(body).toMatchObject({
      event_id: message!.id,
      type: 'message.attempts_exhausted',
      resource_id: 'inv_ops_1',
      data: {
        delivery_id: Number(deliveryId),
        message_id: published.id,
        event_type: 'invoice.paid',
        resource_id: 'inv_ops_1',
        endpoint_id: failingEndpoint,
        url: failing.url,
        attempts: 2,
        last_status_code: 503,
        last_error: 'HTTP 503',
      },
    });
    expect(String(body.timestamp)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // The failing endpoint's copy of the announcement exhausts its ladder too: failed, not announced.
    await waitUntil(
      async () =>
        (
          await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_deliveries WHERE message_id = $1 AND endpoint_id = $2 AND status = 'failed'`, [
            message!.id,
            failingEndpoint,
          ])
        ).rows[0]!.n === 1,
      20_000,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await exhaustedMessages()).toHaveLength(1);
    expect(tenantOps.requests).toHaveLength(1);
  });

  it('a replayed delivery that exhausts its ladder again is not announced a second time (one per delivery)', async () => {
    const { rows } = await t.db.query<{ id: string }>(
      `SELECT d.id::text AS id FROM outbox_deliveries d JOIN outbox_messages m ON m.id = d.message_id WHERE m.event_type = 'invoice.paid' AND d.status = 'failed'`,
    );
    const attemptsBefore = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_attempts')).rows[0]!.n;
    await t.db.query(`UPDATE outbox_deliveries SET status = 'pending', attempts = 0, ladder_base = 0, next_attempt_at = now() WHERE id = $1`, [rows[0]!.id]);
    await t.db.query('UPDATE outbox_queue SET failed = false, next_attempt_at = now() WHERE delivery_id = $1', [rows[0]!.id]);
    await waitUntil(async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_attempts')).rows[0]!.n >= attemptsBefore + 2, 20_000);
    await waitUntil(
      async () => (await t.db.query<{ status: string }>('SELECT status FROM outbox_deliveries WHERE id = $1', [rows[0]!.id])).rows[0]!.status === 'failed',
      20_000,
    );
    expect(await exhaustedMessages()).toHaveLength(1);
  });

  it("endpoint.failing is published to the endpoint's tenant; the incident itself to the operators (default tenant)", async () => {
    const round = await evaluateOnce(t.db, alerts);
    const opened = round.opened.filter((r) => r.rule === 'endpoint_failing');
    // A merchant's failing endpoints are one incident of its tenant, listing them.
    expect(opened.map((r) => r.subject)).toEqual(['tenant:m_ops']);
    expect(opened[0]!.details).toMatchObject({ tenant_id: 'm_ops', endpoint_count: 1, endpoints: [expect.objectContaining({ endpoint_id: failingEndpoint })] });
    const { rows } = await t.db.query<{ event_type: string; tenant_id: string }>(
      `SELECT event_type, tenant_id FROM outbox_messages WHERE resource_id IN ($1, $2) ORDER BY event_type`,
      [failingEndpoint, `incident_${opened[0]!.id}`],
    );
    expect(rows).toEqual([
      { event_type: 'endpoint.failing', tenant_id: 'm_ops' },
      { event_type: 'incident.opened', tenant_id: 'default' },
    ]);
    await waitUntil(() => tenantOps.requests.some((r) => r.body.toString('utf8').includes('"endpoint.failing"')), 20_000);
    expect(defaultOps.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { type: string }).type)).not.toContain('endpoint.failing');
    expect(defaultOps.requests.map((r) => (JSON.parse(r.body.toString('utf8')) as { type: string }).type)).not.toContain('message.attempts_exhausted');
  });
});
