import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { ConfigInput } from '../src/config/index.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createDispatcherService } from '../src/outbox/parts.js';
import type { Context, Service } from '../src/service.js';
import { resolveSettings } from '../src/settings.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

const ADMIN = 'tenant-networks-admin-token';

interface Attempt {
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

/**
 * The operator opens private networks to its own receivers with `sending.allow_networks`; a merchant's
 * token must not inherit that list and reach tekil's own port, its database or internal services.
 */
describe("tenants' destinations: the operator's allow list is the default tenant's only", () => {
  let t: TestDb;
  let sink: Sink;
  const running: Array<{ app: FastifyInstance; dispatcher: Service }> = [];

  const dataDir = mkdtempSync(join(tmpdir(), 'tekil-tenant-networks-'));
  const stopAll = async () => {
    for (const { app, dispatcher } of running.splice(0)) {
      await dispatcher.stop();
      await app.close();
    }
  };

  /** One tekil at a time (the same secret key), so a dispatcher of the previous one claims nothing. */
  const start = async (extra: ConfigInput) => {
    await stopAll();
    const config = parseConfig({
      store: { data_dir: dataDir },
      sending: { allow_networks: ['127.0.0.0/8'], time_scale: 0.001, dispatcher: { poll_interval: '100ms' } },
      ...extra,
    });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    const app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
    const dispatcher = createDispatcherService(ctx);
    await dispatcher.start();
    running.push({ app, dispatcher });
    const call = async (token: string, method: 'GET' | 'POST', url: string, payload?: unknown) => {
      const res = await app.inject({
        method,
        url: `/api/v1${url}`,
        headers: { authorization: `Bearer ${token}` },
        ...(payload ? { payload: payload as object } : {}),
      });
      return { status: res.statusCode, body: res.json() as Record<string, unknown> };
    };
    return { call };
  };

  const attemptsOf = async (messageId: string): Promise<Attempt[]> => {
    await waitUntil(
      async () =>
        (await t.db.query('SELECT 1 FROM outbox_attempts a JOIN outbox_deliveries d ON d.id = a.delivery_id WHERE d.message_id = $1', [messageId])).rows
          .length > 0,
      30_000,
      'an attempt recorded',
    );
    const { rows } = await t.db.query<Attempt>(
      'SELECT a.status_code, a.error, a.response_body FROM outbox_attempts a JOIN outbox_deliveries d ON d.id = a.delivery_id WHERE d.message_id = $1',
      [messageId],
    );
    return rows;
  };

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink(() => ({ status: 200, body: 'internal admin: ok' }));
  }, 60_000);
  afterAll(async () => {
    await stopAll();
    await sink?.close();
    await t?.close();
  });

  it("refuses a tenant's endpoint on the operator's allowed networks, when created and when sent to", async () => {
    const { call } = await start({});
    expect((await call(ADMIN, 'POST', '/tenants', { id: 'm_net', name: 'Merchant' })).status).toBe(201);
    const made = await call(ADMIN, 'POST', '/tenants/m_net/tokens', { role: 'operator', name: 'backend' });
    const token = (made.body as { token: string }).token;

    // The operator's own (default tenant) endpoint on loopback is allowed, as configured.
    expect((await call(ADMIN, 'POST', '/endpoints', { url: `${sink.url}/own` })).status).toBe(201);
    // The merchant's, to tekil's port, the database, or a loopback name, are not: by its token or by the admin's.
    const port = new URL(sink.url).port;
    for (const url of [`${sink.url}/metrics`, 'http://127.0.0.1:5432/', `http://localhost:${port}/`]) {
      const refused = await call(token, 'POST', '/endpoints', { url });
      expect(refused.status, `${url}: ${JSON.stringify(refused.body)}`).toBe(400);
      expect(refused.body).toMatchObject({ error: 'FORBIDDEN_DESTINATION' });
      expect(String(refused.body.hint)).toContain('tenants: { allow_networks: ["127.0.0.0/8"] }');
    }
    expect((await call(ADMIN, 'POST', '/endpoints', { url: `${sink.url}/x`, tenant_id: 'm_net' })).status).toBe(400);

    // An endpoint whose name resolved to a public address (or nothing) when made, and to loopback when
    // sent to (DNS rebinding, or an endpoint made before the operator's list changed), is refused at connect time.
    const unresolved = await call(token, 'POST', '/endpoints', { url: 'http://tekil-tenant-networks.invalid/hook' });
    expect(unresolved.status, JSON.stringify(unresolved.body)).toBe(201);
    await t.db.query('UPDATE endpoints SET url = $1 WHERE id = $2', [`${sink.url}/rebound`, (unresolved.body as { id: string }).id]);
    const msg = await call(ADMIN, 'POST', '/messages', { tenant_id: 'm_net', type: 'invoice.paid', resource_id: 'inv_1', data: {} });
    expect(msg.status, JSON.stringify(msg.body)).toBe(202);
    const [attempt] = await attemptsOf((msg.body as { id: string }).id);
    expect(attempt).toMatchObject({ status_code: null, response_body: null });
    expect(attempt!.error).toMatch(/private, loopback or link-local/);
    expect(sink.requests.filter((r) => r.path === '/rebound')).toHaveLength(0);
  });

  it('with tenants.allow_networks, a tenant reaches those networks, but no answer from them is kept for it to read', async () => {
    const { call } = await start({ tenants: { allow_networks: ['127.0.0.0/8'] } });
    expect((await call(ADMIN, 'POST', '/tenants', { id: 'm_lan', name: 'Merchant on the LAN' })).status).toBe(201);
    const token = ((await call(ADMIN, 'POST', '/tenants/m_lan/tokens', { role: 'operator', name: 'backend' })).body as { token: string }).token;
    const created = await call(token, 'POST', '/endpoints', { url: `${sink.url}/lan` });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const msg = await call(ADMIN, 'POST', '/messages', { tenant_id: 'm_lan', type: 'invoice.paid', resource_id: 'inv_2', data: {} });
    expect(msg.status, JSON.stringify(msg.body)).toBe(202);
    const id = (msg.body as { id: string }).id;
    const [attempt] = await attemptsOf(id);
    expect(attempt).toMatchObject({ status_code: 200, response_body: null });
    const shown = await call(token, 'GET', `/messages/${id}`);
    expect(JSON.stringify(shown.body)).not.toContain('internal admin');

    // The operator's own endpoint on the same network keeps its answer's excerpt.
    const own = await call(ADMIN, 'POST', '/endpoints', { url: `${sink.url}/own2`, event_types: ['own.*'] });
    expect(own.status).toBe(201);
    const mine = await call(ADMIN, 'POST', '/messages', { type: 'own.ping', resource_id: 'r', data: {} });
    expect(await attemptsOf((mine.body as { id: string }).id)).toContainEqual(
      expect.objectContaining({ status_code: 200, response_body: 'internal admin: ok' }),
    );
  });
});
