import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createDispatcherService } from '../src/outbox/parts.js';
import { resolveSettings } from '../src/settings.js';
import type { Context, Service } from '../src/service.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startSink, type Sink } from './helpers/sink.js';

const ADMIN = 'tenant-settings-admin-token';
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type Json = Record<string, unknown>;

/**
 * Per-tenant settings (docs/tenants.md, "A tenant's own settings"): a tenant's defaults override the
 * file's, an endpoint's own value overrides its tenant's; and the operator's bounds on what a tenant's
 * own callers may set (tenants.limits).
 */
describe("tenants: a tenant's own settings and the operator's bounds", () => {
  let t: TestDb;
  let app: FastifyInstance;
  let dispatcher: Service;
  let sink: Sink;

  const call = async (token: string, method: Method, url: string, payload?: unknown) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    return { status: res.statusCode, body: res.json() as Json };
  };
  const admin = (method: Method, url: string, payload?: unknown) => call(ADMIN, method, url, payload);
  const endpoint = async (id: string) => (await admin('GET', `/endpoints/${id}`)).body;

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink();
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-tenant-settings-')) },
      sending: {
        allow_networks: ['127.0.0.0/8'],
        time_scale: 0.001,
        timeout: '10s',
        max_in_flight: 16,
        ladder: 'standard',
        dispatcher: { poll_interval: '100ms' },
      },
      tenants: { allow_networks: ['127.0.0.0/8'], limits: { timeout_max: '30s', max_in_flight_max: 16, rate_limit_max: '50/s' } },
    });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
    dispatcher = createDispatcherService(ctx);
    await dispatcher.start();
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await app?.close();
    await sink?.close();
    await t?.close();
  });

  it("takes a tenant's defaults over the file's, and an endpoint's own value over its tenant's, at creation and after a change", async () => {
    const made = await admin('POST', '/tenants', {
      id: 'm_settings',
      ladder: ['1s', '2s'],
      timeout: '3s',
      rate_limit: '10/s',
      endpoint_max_in_flight: 4,
      event_id: 'delivery',
      max_in_flight: 50,
      weight: 3,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({
      ladder: ['1s', '2s'],
      timeout_ms: 3000,
      rate_limit: '10/s',
      endpoint_max_in_flight: 4,
      event_id: 'delivery',
      max_in_flight: 50,
      weight: 3,
    });
    expect((await admin('GET', '/tenants/m_settings')).body).toMatchObject({ timeout_ms: 3000, weight: 3 });

    // An endpoint without values of its own takes its tenant's.
    const plain = (await admin('POST', '/endpoints', { tenant_id: 'm_settings', url: `${sink.url}/plain` })).body;
    expect(plain).toMatchObject({ ladder: ['1s', '2s'], timeout_ms: 3000, rate_limit: '10/s', max_in_flight: 4, event_id: 'delivery', own_settings: [] });
    // Its own values win over its tenant's.
    const own = (await admin('POST', '/endpoints', { tenant_id: 'm_settings', url: `${sink.url}/own`, timeout: '5s', event_id: 'message', max_in_flight: 2 }))
      .body;
    expect(own).toMatchObject({
      timeout_ms: 5000,
      event_id: 'message',
      max_in_flight: 2,
      rate_limit: '10/s',
      own_settings: ['timeout', 'max_in_flight', 'event_id'],
    });
    // Another tenant's endpoint keeps the file's.
    expect((await admin('POST', '/tenants', { id: 'm_plain' })).status).toBe(201);
    const other = (await admin('POST', '/endpoints', { tenant_id: 'm_plain', url: `${sink.url}/other` })).body;
    expect(other).toMatchObject({ ladder: 'standard', timeout_ms: 10_000, max_in_flight: 16, rate_limit: null, event_id: 'message' });

    // A change of the tenant's default reaches the endpoints that inherit it, not those with their own.
    const changed = await admin('PATCH', '/tenants/m_settings', { timeout: '4s', rate_limit: null });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ timeout_ms: 4000, rate_limit: null, ladder: ['1s', '2s'] });
    expect(await endpoint(plain.id as string)).toMatchObject({ timeout_ms: 4000, rate_limit: null });
    expect(await endpoint(own.id as string)).toMatchObject({ timeout_ms: 5000, rate_limit: null });
    // Cleared, the file's default applies again.
    await admin('PATCH', '/tenants/m_settings', { timeout: null });
    expect(await endpoint(plain.id as string)).toMatchObject({ timeout_ms: 10_000 });
    // An endpoint hands a setting back to its tenant with `inherit`.
    const handedBack = await admin('PATCH', `/endpoints/${own.id as string}`, { inherit: ['timeout', 'event_id'] });
    expect(handedBack.body).toMatchObject({ timeout_ms: 10_000, event_id: 'delivery', max_in_flight: 2, own_settings: ['max_in_flight'] });
    expect(await endpoint(other.id as string)).toMatchObject({ timeout_ms: 10_000, event_id: 'message' });
    expect((await admin('PATCH', `/endpoints/${own.id as string}`, { inherit: ['timeout'], timeout: '2s' })).body).toMatchObject({
      error: 'VALIDATION_FAILED',
    });
    expect((await admin('PATCH', '/tenants/m_settings', { weight: 0 })).body).toMatchObject({ error: 'VALIDATION_FAILED' });
    expect((await admin('PATCH', '/tenants/m_settings', { ladder: 'nope' })).body).toMatchObject({ error: 'VALIDATION_FAILED' });

    // The dispatcher sends with the inherited values: the tenant's `event_id: delivery` gives the
    // receiver the delivery's own id, not the message's.
    const msg = await admin('POST', '/messages', { tenant_id: 'm_settings', type: 'invoice.paid', data: { n: 1 } });
    expect(msg.status).toBe(202);
    await sink.waitFor(2, 30_000);
    const ids = sink.requests.filter((r) => r.path.endsWith('/plain') || r.path.endsWith('/own')).map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).not.toBe(msg.body.id);
  }, 60_000);

  it("refuses what a tenant's own caller sets beyond the operator's bounds with TENANT_LIMIT_EXCEEDED (422); operators are not bound", async () => {
    expect((await admin('POST', '/tenants', { id: 'm_bounded' })).status).toBe(201);
    const token = ((await admin('POST', '/tenants/m_bounded/tokens', { role: 'operator', name: 'backend' })).body as { token: string }).token;
    const url = `${sink.url}/bounded`;
    // The attack: timeout 60 s and 1000 requests in flight per endpoint.
    for (const beyond of [{ timeout: '60s' }, { max_in_flight: 1000 }, { rate_limit: '100/s' }, { rate_limit: null }]) {
      const res = await call(token, 'POST', '/endpoints', { url, ...beyond });
      expect(res.status, JSON.stringify(beyond)).toBe(422);
      expect(res.body).toMatchObject({ error: 'TENANT_LIMIT_EXCEEDED' });
    }
    const both = await call(token, 'POST', '/endpoints', { url, timeout: '60s', max_in_flight: 1000 });
    expect(both.body.message).toMatch(/timeout: at most 30000 ms.*max_in_flight: at most 16/);
    const within = await call(token, 'POST', '/endpoints', { url, timeout: '30s', max_in_flight: 16, rate_limit: '50/s' });
    expect(within.status, JSON.stringify(within.body)).toBe(201);
    const id = within.body.id as string;
    expect((await call(token, 'PATCH', `/endpoints/${id}`, { timeout: '5m' })).body).toMatchObject({ error: 'TENANT_LIMIT_EXCEEDED' });
    expect((await call(token, 'PATCH', `/endpoints/${id}`, { max_in_flight: 17 })).status).toBe(422);
    expect((await call(token, 'PATCH', `/endpoints/${id}`, { timeout: '20s' })).status).toBe(200);
    // The operator sets what it likes, for any tenant.
    expect((await admin('PATCH', `/endpoints/${id}`, { timeout: '60s', max_in_flight: 1000 })).body).toMatchObject({ timeout_ms: 60_000, max_in_flight: 1000 });
  });
});
