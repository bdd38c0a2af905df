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
import { publish } from '../src/outbox/publish.js';
import { resolveSettings } from '../src/settings.js';
import type { Context, Service } from '../src/service.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startSink, type Sink } from './helpers/sink.js';

const TOKEN = 'test-admin-token';

describe('tenants: one per merchant, fan-out limited to the tenant', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let dispatcher: Service;
  let sinkA: Sink;
  let sinkB: Sink;
  let sinkDefault: Sink;

  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${TOKEN}` },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const ids = (sink: Sink) => sink.requests.map((r) => r.headers['webhook-id']);

  beforeAll(async () => {
    t = await createTestDb();
    [sinkA, sinkB, sinkDefault] = await Promise.all([startSink(), startSink(), startSink()]);
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-tenants-')) },
      sending: { allow_networks: ['127.0.0.0/8'], time_scale: 0.001, dispatcher: { poll_interval: '100ms' } },
      tenants: { allow_networks: ['127.0.0.0/8'] },
      retention: { batch_size: 2 },
    });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: TOKEN });
    dispatcher = createDispatcherService(ctx);
    await dispatcher.start();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await app?.close();
    await Promise.all([sinkA?.close(), sinkB?.close(), sinkDefault?.close()]);
    await t?.close();
  });

  it('creates, lists, shows, changes and refuses tenants with coded errors', async () => {
    const a = await api('POST', '/tenants', { id: 'm_crud', name: 'Crud Ltd', metadata: { plan: 'gold' } });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ id: 'm_crud', name: 'Crud Ltd', metadata: { plan: 'gold' }, disabled: false });
    const generated = await api('POST', '/tenants', { name: 'No id' });
    expect(generated.body.id).toMatch(/^ten_/);
    expect((await api('POST', '/tenants', { id: 'm_crud' })).body.error).toBe('CONFLICT');
    expect((await api('POST', '/tenants', { id: 'has space' })).body.error).toBe('VALIDATION_FAILED');
    expect((await api('GET', '/tenants/m_crud')).body).toMatchObject({ id: 'm_crud', name: 'Crud Ltd' });
    expect((await api('GET', '/tenants/m_none')).body.error).toBe('TENANT_NOT_FOUND');
    expect((await api('GET', '/tenants/m_none')).status).toBe(404);
    const changed = await api('PATCH', '/tenants/m_crud', { name: null, metadata: { plan: 'silver' }, disabled: true });
    expect(changed.body).toMatchObject({ id: 'm_crud', name: null, metadata: { plan: 'silver' }, disabled: true });

    const all = await api('GET', '/tenants');
    expect(all.body.items.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining(['default', 'm_crud', generated.body.id]));
    const first = await api('GET', '/tenants?limit=1');
    expect(first.body.items).toHaveLength(1);
    const second = await api('GET', `/tenants?limit=1&after=${first.body.next_cursor}`);
    expect(second.body.items[0].id > first.body.items[0].id).toBe(true);

    expect((await api('POST', '/endpoints', { url: sinkA.url, tenant_id: 'm_none' })).body.error).toBe('TENANT_NOT_FOUND');
    expect((await api('POST', '/messages', { type: 'x.y', tenant_id: 'm_none' })).body.error).toBe('TENANT_NOT_FOUND');
  });

  it("sends a tenant's message to that tenant's endpoints only; no tenant means the default tenant", async () => {
    await api('POST', '/tenants', { id: 'm_a' });
    await api('POST', '/tenants', { id: 'm_b' });
    const epA = await api('POST', '/endpoints', { url: sinkA.url, tenant_id: 'm_a', event_types: ['invoice.*'] });
    const epB = await api('POST', '/endpoints', { url: sinkB.url, tenant_id: 'm_b', event_types: ['invoice.*'] });
    const epDefault = await api('POST', '/endpoints', { url: sinkDefault.url, event_types: ['invoice.*'] });
    expect(epA.body.tenant_id).toBe('m_a');
    expect(epDefault.body.tenant_id).toBe('default');
    expect((await api('GET', '/endpoints?tenant_id=m_b')).body.items.map((e: { id: string }) => e.id)).toEqual([epB.body.id]);

    const viaApi = await api('POST', '/messages', { tenant_id: 'm_a', type: 'invoice.paid', data: { n: 1 } });
    expect(viaApi.status).toBe(202);
    const viaLibrary = await t.db.transaction((tx) => publish(tx, { tenantId: 'm_a', type: 'invoice.paid', data: { n: 2 } }));
    expect(viaLibrary.deliveries).toBe(1);
    const viaDefault = await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { n: 3 } }));
    expect(viaDefault.deliveries).toBe(1);
    await sinkA.waitFor(2);
    await sinkDefault.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(ids(sinkA).sort()).toEqual([viaApi.body.id, viaLibrary.id].sort());
    expect(ids(sinkDefault)).toEqual([viaDefault.id]);
    expect(sinkB.requests).toHaveLength(0);

    // Another tenant's endpoint cannot be an extra destination: to this tenant it does not exist.
    const foreign = await api('POST', '/messages', {
      tenant_id: 'm_a',
      type: 'invoice.paid',
      extra_destinations: [{ url: sinkB.url, endpoint_id: epB.body.id }],
    });
    expect(foreign.body.error).toBe('VALIDATION_FAILED');

    expect((await api('GET', `/messages/${viaApi.body.id}`)).body.tenant_id).toBe('m_a');
    // An Idempotency-Key is its tenant's (migration 025): another tenant's use of it is another message,
    // and a repeat by the first tenant answers its first message.
    const keyed = { tenant_id: 'm_a', type: 'invoice.paid', data: { n: 4 } };
    const keyedPost = (payload: object) =>
      app.inject({ method: 'POST', url: '/api/v1/messages', headers: { authorization: `Bearer ${TOKEN}`, 'idempotency-key': 'tenant-key' }, payload });
    const first = await keyedPost(keyed);
    const other = await keyedPost({ ...keyed, tenant_id: 'm_b' });
    const again = await keyedPost(keyed);
    expect(first.statusCode).toBe(202);
    expect(other.statusCode).toBe(202);
    expect(other.json().id).not.toBe(first.json().id);
    expect(again.json().id).toBe(first.json().id);
    await sinkA.waitFor(3);
    await sinkB.waitFor(1);
    expect(ids(sinkB)).toEqual([other.json().id]);

    const listA = await api('GET', '/messages?tenant_id=m_a');
    expect(listA.body.items.map((m: { id: string }) => m.id).sort()).toEqual([viaApi.body.id, viaLibrary.id, first.json().id].sort());
    expect(listA.body.items.every((m: { tenant_id: string }) => m.tenant_id === 'm_a')).toBe(true);
    const deliveriesB = await api('GET', '/deliveries?tenant_id=m_b');
    expect(deliveriesB.body.items.map((d: { message_id: string }) => d.message_id)).toEqual([other.json().id]);
  });

  it("keeps a disabled tenant's messages and sends them once it is enabled again", async () => {
    await api('POST', '/tenants', { id: 'm_off', disabled: true });
    const sink = await startSink();
    try {
      await api('POST', '/endpoints', { url: sink.url, tenant_id: 'm_off' });
      const msg = await api('POST', '/messages', { tenant_id: 'm_off', type: 'invoice.paid' });
      expect(msg.status).toBe(202);
      await new Promise((r) => setTimeout(r, 700));
      expect(sink.requests).toHaveLength(0);
      const kept = await api('GET', '/deliveries?tenant_id=m_off');
      expect(kept.body.items.map((d: { status: string }) => d.status)).toEqual(['pending']);
      await api('PATCH', '/tenants/m_off', { disabled: false });
      await sink.waitFor(1);
      expect(ids(sink)).toEqual([msg.body.id]);
    } finally {
      await sink.close();
    }
  });

  it('deletes a tenant only when confirmed, with its endpoints, messages, deliveries and attempts, in batches', async () => {
    await api('POST', '/tenants', { id: 'm_gone' });
    const sink = await startSink();
    try {
      const ep = await api('POST', '/endpoints', { url: sink.url, tenant_id: 'm_gone' });
      for (let i = 0; i < 5; i++) await api('POST', '/messages', { tenant_id: 'm_gone', type: 'invoice.paid' });
      await sink.waitFor(5);
      const refused = await api('DELETE', '/tenants/m_gone', {});
      expect(refused).toMatchObject({ status: 400, body: { error: 'CONFIRMATION_REQUIRED' } });
      expect((await api('DELETE', '/tenants/default', { confirm: true })).body.error).toBe('CONFLICT');
      expect((await api('GET', '/tenants/m_gone')).status).toBe(200);

      // A delivery whose message went first (a store upgraded with such rows, or a crash between two
      // statements): found by its own tenant_id, with its attempt.
      await t.db.query("DELETE FROM outbox_messages WHERE id = (SELECT min(id) FROM outbox_messages WHERE tenant_id = 'm_gone')");

      // Another tenant's history stays.
      const before = (await api('GET', '/messages?tenant_id=m_a')).body.items.length;
      const deleted = await api('DELETE', '/tenants/m_gone', { confirm: true });
      expect(deleted.body).toEqual({ id: 'm_gone', deleted: true, endpoints: 1, messages: 4, deliveries: 5 });
      expect((await api('GET', '/tenants/m_gone')).status).toBe(404);
      expect((await api('GET', `/endpoints/${ep.body.id}`)).status).toBe(404);
      expect((await api('GET', '/messages?tenant_id=m_gone')).body.items).toHaveLength(0);
      const left = await t.db.query<{ n: number }>(
        `SELECT ((SELECT count(*) FROM outbox_deliveries WHERE endpoint_id = $1) + (SELECT count(*) FROM outbox_attempts a WHERE NOT EXISTS (SELECT 1 FROM outbox_deliveries d WHERE d.id = a.delivery_id)))::int AS n`,
        [ep.body.id],
      );
      expect(left.rows[0]!.n).toBe(0);
      const ofTenant = await t.db.query<{ n: number }>(
        `SELECT ((SELECT count(*) FROM outbox_deliveries WHERE tenant_id = 'm_gone') + (SELECT count(*) FROM outbox_attempts WHERE tenant_id = 'm_gone')
                 + (SELECT count(*) FROM outbox_queue WHERE tenant_id = 'm_gone'))::int AS n`,
      );
      expect(ofTenant.rows[0]!.n).toBe(0);
      expect((await api('GET', '/messages?tenant_id=m_a')).body.items.length).toBe(before);
      expect((await api('POST', '/messages', { tenant_id: 'm_gone', type: 'invoice.paid' })).body.error).toBe('TENANT_NOT_FOUND');
    } finally {
      await sink.close();
    }
  });
});
