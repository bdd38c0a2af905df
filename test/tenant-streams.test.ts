import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import type { Context } from '../src/service.js';
import { resolveSettings } from '../src/settings.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'tenant-streams-admin';
const POLL_MS = 200;

interface Stream {
  status: number;
  body: string;
  text: () => string;
  close: () => Promise<void>;
}

/**
 * A tenant's event streams (`GET /api/v1/events` with a tenant token) share one poll of the tenant's
 * deliveries, and are capped per tenant (its `streams` quota), per credential and per address, with
 * `429 TOO_MANY_STREAMS` past a cap. 100 streams of one merchant's viewer token used to poll 100 times
 * every 2 s and slowed every other client's webhooks from 7 ms to 2.3 s.
 */
describe("a tenant's event streams: one poll per tenant, capped per tenant, credential and address", () => {
  let t: TestDb;
  let app: FastifyInstance;
  let base: string;
  const tokens: Record<string, string> = {};
  const streams: Stream[] = [];

  const admin = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${ADMIN}` },
      ...(payload ? { payload: payload as object } : {}),
    });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };

  const open = async (token: string): Promise<Stream> => {
    const res = await request(`${base}/api/v1/events`, { headers: { authorization: `Bearer ${token}` } });
    if (res.statusCode !== 200) return { status: res.statusCode, body: await res.body.text(), text: () => '', close: async () => {} };
    let text = '';
    const reading = (async () => {
      for await (const chunk of res.body) text += (chunk as Buffer).toString('utf8');
    })().catch(() => undefined);
    const stream = {
      status: 200,
      body: '',
      text: () => text,
      close: async () => {
        res.body.destroy();
        await reading;
      },
    };
    streams.push(stream);
    await waitUntil(() => text.includes(': connected'), 10_000);
    return stream;
  };

  const polls = async () => {
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    return Number(/^tekil_event_stream_tenant_polls_total (\d+)/m.exec(res.body)?.[1] ?? 0);
  };

  beforeAll(async () => {
    t = await createTestDb();
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-tenant-streams-')) },
      sending: { allow_networks: ['127.0.0.0/8'] },
      tenants: { allow_networks: ['127.0.0.0/8'], quotas: { streams: 6 }, streams: { poll_interval: `${POLL_MS}ms`, per_session: 3, per_address: 8 } },
    });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    for (const id of ['m_a', 'm_b']) {
      expect((await admin('POST', '/tenants', { id })).status).toBe(201);
      expect((await admin('POST', '/endpoints', { url: `http://127.0.0.1:9/${id}`, tenant_id: id })).status).toBe(201);
    }
    for (const [name, tenant] of [
      ['a1', 'm_a'],
      ['a2', 'm_a'],
      ['a3', 'm_a'],
      ['b1', 'm_b'],
      ['b2', 'm_b'],
    ]) {
      const res = await admin('POST', `/tenants/${tenant}/tokens`, { role: 'viewer' });
      expect(res.status).toBe(201);
      tokens[name!] = res.body.token as string;
    }
  }, 60_000);
  afterAll(async () => {
    for (const s of streams) await s.close();
    await app?.close();
    await t?.close();
  });

  it('caps streams per credential and per tenant (its streams quota) with 429 TOO_MANY_STREAMS', async () => {
    for (let i = 0; i < 3; i++) expect((await open(tokens.a1!)).status).toBe(200);
    const fourth = await open(tokens.a1!);
    expect(fourth.status).toBe(429);
    expect(JSON.parse(fourth.body)).toMatchObject({ error: 'TOO_MANY_STREAMS' });
    expect(JSON.parse(fourth.body).message).toMatch(/session/);
    for (let i = 0; i < 3; i++) expect((await open(tokens.a2!)).status).toBe(200);
    // Six streams of m_a: its quota. Another credential of the same tenant is refused too.
    const seventh = await open(tokens.a3!);
    expect(seventh.status).toBe(429);
    expect(JSON.parse(seventh.body).message).toMatch(/tenant/);
    // Another tenant is not held back by m_a's streams.
    expect((await open(tokens.b1!)).status).toBe(200);
  });

  it('polls once per tenant and interval, whatever its number of streams, and fans each change out to all of them', async () => {
    // Six streams of m_a, one of m_b: two polls an interval (fourteen if each stream polled).
    const before = await polls();
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 2_000));
    const intervals = (Date.now() - started) / POLL_MS;
    const ran = (await polls()) - before;
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThanOrEqual(2 * (intervals + 2));
    const published = await admin('POST', '/messages', { tenant_id: 'm_a', type: 'invoice.paid', resource_id: 'inv_live' });
    expect(published.status).toBe(202);
    const id = published.body.id as string;
    const mine = streams.slice(0, 6);
    await waitUntil(() => mine.every((s) => s.text().includes(id)), 20_000);
    expect(streams[6]!.text()).not.toContain(id);
  }, 30_000);

  it('caps streams per address; a closed stream gives its place back; an operator raises a tenant quota', async () => {
    // Seven open from 127.0.0.1, the cap is 8.
    expect((await open(tokens.b2!)).status).toBe(200);
    const ninth = await open(tokens.b2!);
    expect(ninth.status).toBe(429);
    expect(JSON.parse(ninth.body).message).toMatch(/address/);
    await streams.pop()!.close();
    await waitUntil(async () => (await open(tokens.b2!)).status === 200, 10_000);
    // m_a at its quota of 6: raised to 7 for it alone, a third credential gets its stream (after one place is freed by address).
    expect((await admin('PATCH', '/tenants/m_a/quotas', { streams: 7 })).body).toMatchObject({ quotas: { streams: 7 }, own: { streams: 7 } });
    await streams.pop()!.close();
    await waitUntil(async () => (await open(tokens.a3!)).status === 200, 10_000);
  }, 30_000);
});
