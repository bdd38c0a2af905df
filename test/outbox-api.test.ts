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
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

const TOKEN = 'test-admin-token';

describe('admin API: endpoints, messages, history, replay, ping', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let dispatcher: Service;
  let sink: Sink;
  let flaky: Sink;
  let flakyHealthy = false;

  const api = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${TOKEN}`, ...headers },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    return { status: res.statusCode, body: res.headers['content-type']?.toString().includes('json') ? res.json() : res.body, headers: res.headers };
  };

  beforeAll(async () => {
    t = await createTestDb();
    [sink, flaky] = await Promise.all([startSink(), startSink(() => (flakyHealthy ? { status: 200 } : { status: 500 }))]);
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-api-')) },
      sending: { allow_networks: ['127.0.0.0/8'], time_scale: 0.001, dispatcher: { poll_interval: '100ms' } },
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
    await Promise.all([sink?.close(), flaky?.close()]);
    await t?.close();
  });

  it('manages endpoints: create (secret shown once), validate, list, update, disable, enable, rotate, delete', async () => {
    expect((await app.inject({ method: 'GET', url: '/api/v1/endpoints' })).statusCode).toBe(401);
    const created = await api('POST', '/endpoints', { url: sink.url, event_types: ['invoice.*'], ladder: 'paymos', timeout: '5s' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: sink.url, event_types: ['invoice.*'], ladder: 'paymos', timeout_ms: 5000, scheme: 'standard', enabled: true });
    expect(created.body.id).toMatch(/^ep_/);
    expect(created.body.secret).toMatch(/^whsec_/);
    const id = created.body.id as string;

    expect((await api('POST', '/endpoints', { url: sink.url, ladder: 'weekly' })).body.error).toBe('VALIDATION_FAILED');
    expect((await api('POST', '/endpoints', { url: 'http://169.254.169.254/' })).body).toMatchObject({
      error: 'FORBIDDEN_DESTINATION',
      // The list in force (127.0.0.0/8) is repeated: pasting the line adds a network, it removes none.
      hint: 'to allow it, set in the configuration (a list replaces the networks allowed now, so this one repeats them): sending: { allow_networks: ["127.0.0.0/8", "169.254.169.254/32"] }',
    });
    expect((await api('POST', '/endpoints', { url: sink.url, event_types: ['bad type!'] })).status).toBe(400);

    const shown = await api('GET', `/endpoints/${id}`);
    expect(shown.body.secret).toBeUndefined();
    expect((await api('GET', '/endpoints')).body.items.map((e: { id: string }) => e.id)).toContain(id);
    const updated = await api('PATCH', `/endpoints/${id}`, { ladder: ['30s', '2m'], max_in_flight: 4, scheme: 'paymos' });
    expect(updated.body).toMatchObject({ ladder: ['30s', '2m'], max_in_flight: 4, scheme: 'paymos' });
    expect((await api('POST', `/endpoints/${id}/disable`)).body).toMatchObject({ enabled: false });
    expect((await api('POST', `/endpoints/${id}/enable`)).body).toMatchObject({ enabled: true, disabled_reason: null });
    const rotated = await api('POST', `/endpoints/${id}/rotate-secret`, { window: '1h' });
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(new Date(rotated.body.previous_expires_at).getTime()).toBeGreaterThan(Date.now() + 3_500_000);
    expect((await api('DELETE', `/endpoints/${id}`)).body).toMatchObject({ deleted: true });
    expect((await api('GET', `/endpoints/${id}`)).status).toBe(404);
  });

  it('publishes over HTTP; an Idempotency-Key repeat returns the first id; the detail shows deliveries and attempts', async () => {
    const ep = (await api('POST', '/endpoints', { url: sink.url, event_types: ['order.*'] })).body;
    const first = await api('POST', '/messages', { type: 'order.paid', resource_id: 'ord_1', data: { total: 5 } }, { 'idempotency-key': 'order-1-paid' });
    expect(first.status).toBe(202);
    expect(first.body.id).toMatch(/^evt_/);
    const again = await api('POST', '/messages', { type: 'order.paid', resource_id: 'ord_1', data: { total: 5 } }, { 'idempotency-key': 'order-1-paid' });
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const count = await t.db.query<{ n: number }>("SELECT count(*) AS n FROM outbox_messages WHERE idempotency_key = 'order-1-paid'");
    expect(Number(count.rows[0]!.n)).toBe(1);

    await waitUntil(async () => (await api('GET', `/messages/${first.body.id}`)).body.deliveries[0]?.status === 'succeeded');
    const detail = (await api('GET', `/messages/${first.body.id}`)).body;
    expect(detail).toMatchObject({
      id: first.body.id,
      event_type: 'order.paid',
      resource_id: 'ord_1',
      payload: { event_id: first.body.id, data: { total: 5 } },
    });
    expect(detail.deliveries).toHaveLength(1);
    expect(detail.deliveries[0]).toMatchObject({ endpoint_id: ep.id, url: sink.url, status: 'succeeded', attempts: 1, last_status_code: 200 });
    expect(detail.deliveries[0].attempt_history).toHaveLength(1);
    expect(detail.deliveries[0].attempt_history[0]).toMatchObject({ attempt: 1, succeeded: true, status_code: 200, response_body: 'ok' });
    expect(typeof detail.deliveries[0].attempt_history[0].duration_ms).toBe('number');
  });

  it('lists with filters and cursor pagination past any page size, and exports CSV', async () => {
    const ep = (await api('POST', '/endpoints', { url: sink.url, event_types: ['page.*'] })).body;
    const published: string[] = [];
    for (let i = 0; i < 7; i++) published.push((await api('POST', '/messages', { type: 'page.item', resource_id: `res_${i % 2}`, data: { i } })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await api('GET', `/messages?type=page.item&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.items.map((m: { id: string }) => m.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...published].reverse());
    expect((await api('GET', '/messages?type=page.item&resource_id=res_0')).body.items).toHaveLength(4);
    expect((await api('GET', '/messages?status=bogus')).status).toBe(400);

    await waitUntil(async () => (await api('GET', `/deliveries?endpoint_id=${ep.id}&status=succeeded&limit=1000`)).body.items.length === 7);
    const deliveries = await api('GET', `/deliveries?endpoint_id=${ep.id}&limit=5`);
    expect(deliveries.body.items).toHaveLength(5);
    expect(deliveries.body.next_cursor).not.toBeNull();
    const tampered = `A${String(deliveries.body.next_cursor).slice(1)}`;
    expect(await api('GET', `/deliveries?cursor=${tampered}`)).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED' } });

    const csv = await api('GET', `/deliveries/export.csv?endpoint_id=${ep.id}`);
    expect(csv.status).toBe(200);
    expect(String(csv.headers['content-type'])).toMatch(/text\/csv/);
    const lines = (csv.body as string).trim().split('\n');
    expect(lines[0]).toMatch(/^delivery_id,message_id,event_type/);
    expect(lines).toHaveLength(8);
    expect(lines.slice(1).every((l) => l.includes(',page.item,') && l.includes(',succeeded,'))).toBe(true);
  });

  it('bulk-replays failed deliveries of an endpoint and pings an endpoint', async () => {
    const ep = (await api('POST', '/endpoints', { url: flaky.url, event_types: ['flaky.*'], ladder: ['10s'] })).body;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await api('POST', '/messages', { type: 'flaky.thing', data: { i } })).body.id);
    await waitUntil(async () => (await api('GET', `/deliveries?endpoint_id=${ep.id}&status=failed`)).body.items.length === 3);
    // Failed deliveries are listed through the queue, newest first, in pages like every other list.
    const firstPage = await api('GET', `/deliveries?endpoint_id=${ep.id}&status=failed&limit=2`);
    const secondPage = await api('GET', `/deliveries?endpoint_id=${ep.id}&status=failed&limit=2&cursor=${firstPage.body.next_cursor}`);
    expect([...firstPage.body.items, ...secondPage.body.items].map((d: { message_id: string; status: string }) => [d.message_id, d.status])).toEqual(
      [...ids].reverse().map((id) => [id, 'failed']),
    );
    expect(secondPage.body.next_cursor).toBeNull();
    expect((await api('GET', `/endpoints/${ep.id}`)).body).toMatchObject({ enabled: true, consecutive_failures: 3 });

    flakyHealthy = true;
    const replay = await api('POST', '/deliveries/replay-failed', { endpoint_id: ep.id, since: new Date(Date.now() - 60_000).toISOString() });
    expect(replay.body).toEqual({ replayed: 3 });
    await waitUntil(async () => (await api('GET', `/deliveries?endpoint_id=${ep.id}&status=succeeded`)).body.items.length === 3);
    const replayedIds = flaky.requests.slice(-3).map((r) => r.headers['webhook-id']);
    expect(new Set(replayedIds)).toEqual(new Set(ids));

    // One more request for that message: its two failed attempts and the bulk replay came before.
    const sentBefore = flaky.requests.filter((r) => r.headers['webhook-id'] === ids[0]).length;
    expect(sentBefore).toBe(3);
    const one = await api('POST', `/messages/${ids[0]}/replay`, { endpoint_id: ep.id });
    expect(one.body).toEqual({ replayed: 1 });
    await waitUntil(() => flaky.requests.filter((r) => r.headers['webhook-id'] === ids[0]).length === sentBefore + 1);

    const ping = await api('POST', `/endpoints/${ep.id}/ping`);
    expect(ping.status).toBe(202);
    await waitUntil(() => flaky.requests.some((r) => r.headers['webhook-id'] === ping.body.id));
    const pinged = flaky.requests.find((r) => r.headers['webhook-id'] === ping.body.id)!;
    expect(JSON.parse(pinged.body.toString())).toMatchObject({ type: 'test.ping', data: { endpoint_id: ep.id } });
    expect(sink.requests.some((r) => r.headers['webhook-id'] === ping.body.id)).toBe(false);
  });

  it('bad input is a 400 with a code, never a 500: out-of-range timeouts, NUL bytes, bad cursors', async () => {
    const refused = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
      const res = await api(method, url, payload);
      expect(res.status, `${method} ${url} ${JSON.stringify(payload)}`).toBe(400);
      expect(res.body.error, `${method} ${url}`).toBe('VALIDATION_FAILED');
      // The message is tekil's own, not the database's.
      expect(String(res.body.message)).not.toMatch(/invalid byte sequence|out of range for type|syntax for type/);
      return res.body as { message: string };
    };
    expect((await refused('POST', '/endpoints', { url: sink.url, timeout: '100000000d' })).message).toMatch(/timeout/);
    await refused('POST', '/endpoints', { url: sink.url, timeout: 0 });
    await refused('POST', '/endpoints', { url: sink.url, description: 'a\u0000b' });
    const { body: ep } = await api('POST', '/endpoints', { url: sink.url, event_types: ['nul.test'] });
    await refused('PATCH', `/endpoints/${ep.id}`, { timeout: '100000000d' });
    expect((await refused('POST', `/endpoints/${ep.id}/rotate-secret`, { window: '1000000000d' })).message).toMatch(/window/);
    expect((await refused('POST', '/messages', { type: 'nul.test', resource_id: 'inv\u0000_1' })).message).toMatch(/resource_id/);
    await refused('POST', '/messages', { type: 'nul.test', extra_destinations: [{ url: sink.url, endpoint_id: 'ep\u0000x' }] });
    await refused('POST', `/messages/evt_x/replay`, { endpoint_id: 'ep\u0000x' });
    for (const cursor of ['!!!', Buffer.from('99999999999999999999').toString('base64url'), Buffer.from('1\u0000').toString('base64url'), 'x'.repeat(200)]) {
      await refused('GET', `/deliveries?cursor=${encodeURIComponent(cursor)}`);
      await refused('GET', `/messages?cursor=${encodeURIComponent(cursor)}`);
    }
    await refused('GET', `/deliveries?limit=${'9'.repeat(400)}`);
  });
});
