import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { HEALTH_SAMPLE, PENDING_CAP, type TenantHealth, type TenantHealthPage } from '../src/tenants/health.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { workerTestConfig } from './helpers/inbox.js';
import { testContext } from './helpers/receiver.js';

const ADMIN = 'tenants-health-admin';

/**
 * The Tenants page's API on a store holding tenants with failing, healthy and no endpoints: the
 * figures each one gets, search, paging, and a viewer reading it.
 */
describe('GET /api/v1/stats/tenants: health per tenant', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let viewer = '';

  const get = async (query: string, token = ADMIN) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/stats/tenants${query}`, headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.json() as TenantHealthPage & { error?: string } };
  };
  const tenant = (page: TenantHealthPage, id: string): TenantHealth => {
    const found = page.items.find((i) => i.id === id);
    if (!found) throw new Error(`no ${id} in ${JSON.stringify(page.items.map((i) => i.id))}`);
    return found;
  };
  /** `n` deliveries of one endpoint, last attempted `agoMs` before now, parked in the queue when not settled. */
  const deliveries = async (endpointId: string, n: number, status: 'succeeded' | 'pending' | 'failed', agoMs = 0) => {
    await t.db.query(
      `WITH d AS (
         INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, last_attempt_at)
         SELECT (SELECT tenant_id FROM endpoints WHERE id = $1), 'msg_' || $1 || '_' || $3 || '_' || $4 || '_' || g, $1::text, $3::text, 1, now() - $4::int * interval '1 millisecond' FROM generate_series(1, $2::int) g
         RETURNING tenant_id, id, endpoint_id, status)
       INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) SELECT tenant_id, id, endpoint_id, status = 'failed' FROM d WHERE status <> 'succeeded'`,
      [endpointId, n, status, agoMs],
    );
  };

  beforeAll(async () => {
    t = await createTestDb();
    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-tenants-health-')) } });
    app = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken: ADMIN });
    const made = await app.inject({
      method: 'POST',
      url: '/api/v1/operators',
      payload: { name: 'tenants-viewer', role: 'viewer' },
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(made.statusCode, made.body).toBe(201);
    viewer = (made.json() as { token: string }).token;

    await t.db.query(
      `INSERT INTO tenants (id, name) VALUES ('m_fail', 'Failing Foods'), ('m_ok', 'Healthy Hats'), ('m_none', 'Empty Eggs'), ('m_big', 'Big 50%_Off')`,
    );
    await t.db.query(
      `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight, enabled, disabled_reason, failed_attempts_in_row, deleted_at) VALUES
         ('ep_breaker', 'm_fail', 'https://a.example/h', 5000, 4, true, NULL, 25, NULL),
         ('ep_low', 'm_fail', 'https://b.example/h', 5000, 4, true, NULL, 1, NULL),
         ('ep_off', 'm_fail', 'https://c.example/h', 5000, 4, false, 'disabled after 5 consecutive failed deliveries', 0, NULL),
         ('ep_ok', 'm_ok', 'https://d.example/h', 5000, 4, true, NULL, 0, NULL),
         ('ep_paused', 'm_ok', 'https://e.example/h', 5000, 4, false, 'disabled by an operator', 0, NULL),
         ('ep_gone', 'm_ok', 'https://f.example/h', 5000, 4, false, 'deleted', 30, now()),
         ('ep_big', 'm_big', 'https://g.example/h', 5000, 4, true, NULL, 0, NULL)`,
    );
    await deliveries('ep_breaker', 2, 'pending');
    await deliveries('ep_low', 5, 'succeeded');
    await deliveries('ep_low', 15, 'pending');
    await deliveries('ep_low', 3, 'failed');
    await deliveries('ep_ok', 4, 'failed', 2 * 3_600_000); // failed, but before the window
    await deliveries('ep_ok', 10, 'succeeded');
    await deliveries('ep_gone', 7, 'failed');
    // More than the sample, and more waiting than are counted.
    await deliveries('ep_big', HEALTH_SAMPLE + 50, 'succeeded');
    await t.db.query(
      `INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id) SELECT (SELECT tenant_id FROM endpoints WHERE id = 'ep_big'), 1000000 + g, 'ep_big' FROM generate_series(1, $1::int) g`,
      [PENDING_CAP + 5],
    );
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('gives each tenant its endpoints, failing endpoints with their reasons, success rate, pending and failed', async () => {
    const { status, body } = await get('?window=1h');
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.window_ms).toBe(3_600_000);
    const failing = tenant(body, 'm_fail');
    expect(failing).toMatchObject({ name: 'Failing Foods', endpoints: 3, failing_endpoints: 3, attempted: 25, succeeded: 5, pending: 17, failed: 3 });
    expect(failing.success_rate).toBeCloseTo(0.2, 6);
    expect(failing.failing).toEqual([
      { endpoint_id: 'ep_breaker', reason: 'breaker_open' },
      { endpoint_id: 'ep_low', reason: 'low_success_rate' },
      { endpoint_id: 'ep_off', reason: 'disabled_after_failures' },
    ]);
    // Paused by an operator is not failing; a deleted endpoint is not counted at all.
    expect(tenant(body, 'm_ok')).toMatchObject({
      endpoints: 2,
      failing_endpoints: 0,
      failing: [],
      attempted: 10,
      succeeded: 10,
      success_rate: 1,
      pending: 0,
      failed: 4,
    });
    expect(tenant(body, 'm_none')).toMatchObject({ endpoints: 0, failing_endpoints: 0, attempted: 0, success_rate: null, pending: 0, failed: 0 });
    expect(tenant(body, 'm_big')).toMatchObject({ endpoints: 1, attempted: HEALTH_SAMPLE, succeeded: HEALTH_SAMPLE, pending: PENDING_CAP, pending_more: true });
    expect(tenant(body, 'm_ok').pending_more).toBe(false);
  });

  it("the window bounds the success rate: a day's window sees the older failures", async () => {
    const { body } = await get('?window=24h');
    expect(tenant(body, 'm_ok')).toMatchObject({ attempted: 14, succeeded: 10 });
  });

  it('the failing rules follow the config: a streak under the breaker but at the alert threshold is failing', async () => {
    await t.db.query(`UPDATE endpoints SET failed_attempts_in_row = 5 WHERE id = 'ep_ok'`);
    try {
      const { body } = await get('?q=m_ok');
      expect(tenant(body, 'm_ok').failing).toEqual([{ endpoint_id: 'ep_ok', reason: 'failing_in_a_row' }]);
    } finally {
      await t.db.query(`UPDATE endpoints SET failed_attempts_in_row = 0 WHERE id = 'ep_ok'`);
    }
  });

  it('searches id and name, anywhere and in any case, with wildcards taken literally', async () => {
    const ids = async (q: string) => (await get(`?q=${encodeURIComponent(q)}`)).body.items.map((i) => i.id);
    expect(await ids('hats')).toEqual(['m_ok']);
    expect(await ids('M_FA')).toEqual(['m_fail']);
    expect(await ids('eggs')).toEqual(['m_none']);
    expect(await ids('50%_')).toEqual(['m_big']);
    expect(await ids('%')).toEqual(['m_big']);
    expect(await ids('_gg')).toEqual([]);
    expect(await ids('nobody')).toEqual([]);
  });

  it('pages in id order with after and limit; more than 100 is refused', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page: { body: TenantHealthPage } = await get(`?limit=2${after ? `&after=${after}` : ''}`);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((x) => x.id));
      after = page.body.next_cursor;
      if (!after) break;
    }
    expect(seen).toEqual(['default', 'm_big', 'm_fail', 'm_none', 'm_ok']);
    // A search pages the same way.
    const first = await get('?q=m_&limit=1');
    expect(first.body.items.map((i) => i.id)).toEqual(['m_big']);
    const second = await get(`?q=m_&limit=1&after=${first.body.next_cursor}`);
    expect(second.body.items.map((i) => i.id)).toEqual(['m_fail']);
    expect(second.body.items[0]!.failing_endpoints).toBe(3);
    expect((await get('?limit=101')).body.error).toBe('VALIDATION_FAILED');
    expect((await get('?window=2d')).status).toBe(400);
  });

  it("a tenant's own token cannot read it: 404, as for any route with no tenant meaning", async () => {
    const made = await app.inject({
      method: 'POST',
      url: '/api/v1/tenants/m_ok/tokens',
      payload: { role: 'viewer' },
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(made.statusCode, made.body).toBe(201);
    const { status } = await get('', (made.json() as { token: string }).token);
    expect(status).toBe(404);
  });

  it('a viewer can read it', async () => {
    const { status, body } = await get('?q=m_fail', viewer);
    expect(status).toBe(200);
    expect(body.items.map((i) => i.id)).toEqual(['m_fail']);
  });
});
