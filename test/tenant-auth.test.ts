import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../src/api/openapi.js';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import type { ConfigInput } from '../src/config/index.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createDispatcherService } from '../src/outbox/parts.js';
import { resolveSettings } from '../src/settings.js';
import type { Context, Service } from '../src/service.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

const ADMIN = 'tenant-auth-admin-token';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
interface Operation {
  method: Method;
  path: string;
  tenant: boolean;
}

describe('tenant-scoped access: tenant tokens, portal links, the portal', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let dispatcher: Service;
  let sink: Sink;
  let operations: Operation[];
  /** Tenant A's operator token, and what each tenant owns. */
  let tokenA = '';
  const own = {
    A: { endpoint: '', message: '', delivery: '' },
    B: { endpoint: '', message: '', delivery: '' },
  };

  const call = async (token: string | undefined, method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.inject({
      method,
      url,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    const json = res.headers['content-type']?.toString().includes('json');
    return { status: res.statusCode, body: json ? (res.json() as Record<string, unknown>) : res.body, text: res.body, headers: res.headers };
  };
  const admin = (method: Method, url: string, payload?: unknown) => call(ADMIN, method, `/api/v1${url}`, payload);

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink();
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-tenant-auth-')) },
      sending: { allow_networks: ['127.0.0.0/8'], time_scale: 0.001, dispatcher: { poll_interval: '100ms' } },
      tenants: { allow_networks: ['127.0.0.0/8'] },
      portal: { name: 'Paymos', accent_color: '#0a7cff', public_url: 'http://tekil.test' },
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

    for (const tenant of ['A', 'B'] as const) {
      expect((await admin('POST', '/tenants', { id: `m_${tenant}`, name: `Merchant ${tenant}` })).status).toBe(201);
      const ep = await admin('POST', '/endpoints', { url: `${sink.url}/${tenant}`, tenant_id: `m_${tenant}` });
      expect(ep.status, JSON.stringify(ep.body)).toBe(201);
      own[tenant].endpoint = (ep.body as { id: string }).id;
      const msg = await admin('POST', '/messages', { tenant_id: `m_${tenant}`, type: 'invoice.paid', resource_id: `inv_${tenant}`, data: { t: tenant } });
      expect(msg.status).toBe(202);
      own[tenant].message = (msg.body as { id: string }).id;
    }
    // Each message sent once: every delivery then has an attempt.
    await sink.waitFor(2, 30_000);
    await waitUntil(
      async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_attempts')).rows[0]!.n >= 2,
      30_000,
      'both attempts recorded',
    );
    for (const tenant of ['A', 'B'] as const) {
      const { rows } = await t.db.query<{ id: string }>('SELECT id::text AS id FROM outbox_deliveries WHERE message_id = $1', [own[tenant].message]);
      own[tenant].delivery = rows[0]!.id;
    }
    const made = await admin('POST', '/tenants/m_A/tokens', { role: 'operator', name: 'backend' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    tokenA = (made.body as { token: string }).token;

    const doc = (await call(undefined, 'GET', '/api/v1/openapi.json')).body as unknown as OpenApiDocument;
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase() as Method, path, tenant: op['x-tekil-tenant'] === true })),
    );
  }, 120_000);
  afterAll(async () => {
    await dispatcher?.stop();
    await app?.close();
    await sink?.close();
    await t?.close();
  });

  /** A path of the document with tenant B's ids in it: its messages, endpoints, deliveries, the tenant itself. */
  const withIdsOfB = (path: string): string =>
    path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
      if (path.startsWith('/api/v1/messages/')) return own.B.message;
      if (path.startsWith('/api/v1/endpoints/')) return own.B.endpoint;
      if (path.startsWith('/api/v1/deliveries/') || name.includes('delivery')) return own.B.delivery;
      if (path.startsWith('/api/v1/tenants/')) return name === 'id' ? 'm_B' : 'ttk_00';
      if (path.startsWith('/api/v1/inbox/') || path.startsWith('/api/v1/jobs/')) return own.B.delivery;
      return own.B.message;
    });

  /** Input naming B's rows, for routes whose ids are in the query or the body. */
  const inputOfB = (o: Operation): { query: string; body: unknown } => {
    const query = o.method === 'GET' ? `?tenant_id=m_B` : '';
    const bodies: Record<string, unknown> = {
      'POST /api/v1/endpoints': { url: `${sink.url}/made-by-A`, tenant_id: 'm_B' },
      'POST /api/v1/deliveries/replay-failed': { endpoint_id: own.B.endpoint },
      'POST /api/v1/erasures': { messages: [own.B.message], deliveries: [own.B.delivery], confirm: true },
    };
    const body = o.method === 'GET' ? undefined : (bodies[`${o.method} ${o.path}`] ?? {});
    return { query, body };
  };

  /** Routes a tenant may call that take no id at all: checked to answer its own rows only, below. */
  const NO_ID = new Set(['GET /api/v1/session', 'DELETE /api/v1/session', 'GET /api/v1/events']);

  it("walks every route of the OpenAPI document with tenant A's token against tenant B's ids: 404, never 403, never B's rows", async () => {
    const walked = operations.filter((o) => !NO_ID.has(`${o.method} ${o.path}`) && o.path !== '/api/v1/openapi.json');
    expect(walked.length).toBeGreaterThan(40);
    const tenantRoutes = walked.filter((o) => o.tenant);
    expect(tenantRoutes.length).toBeGreaterThanOrEqual(15);
    // B's ids, and ids of the same shape that name nothing: the answers must be the same but for the id.
    const ghosts: Array<[string, string]> = [
      [own.B.message, 'evt_0000000000000000000000000000'],
      [own.B.endpoint, 'ep_00000000000000000000000000'],
      [own.B.delivery, '999999999'],
      ['m_B', 'm_ghost'],
    ];
    const asGhost = (text: string) => ghosts.reduce((acc, [real, ghost]) => acc.replaceAll(real, ghost), text);
    const normal = (text: string) => ghosts.reduce((acc, [real, ghost]) => acc.replaceAll(real, '<id>').replaceAll(ghost, '<id>'), text);
    const dataOfB = ['inv_B', `${sink.url}/B`, 'Merchant B'];
    for (const o of walked) {
      const hasParams = o.path.includes('{');
      // Routes with path ids get B's there; the others name B in their query or body.
      const { query, body } = hasParams ? { query: '', body: o.method === 'GET' ? undefined : {} } : inputOfB(o);
      const url = `${withIdsOfB(o.path)}${query}`;
      const res = await call(tokenA, o.method, url, body, { 'content-type': 'application/json' });
      const what = `${o.method} ${o.path}${query} (tenant route: ${o.tenant}): ${res.status} ${res.text.slice(0, 200)}`;
      if (o.method === 'POST' && o.path.startsWith('/api/v1/session')) {
        // Signing in is public: the token is in its body, not the bearer's; an empty body is refused as input.
        expect(res.status, what).toBe(400);
        continue;
      }
      expect(res.status, what).toBe(404);
      for (const data of dataOfB) expect(res.text, what).not.toContain(data);
      const ghost = await call(tokenA, o.method, asGhost(url), body === undefined ? undefined : JSON.parse(asGhost(JSON.stringify(body))), {
        'content-type': 'application/json',
      });
      expect(ghost.status, `${what} (ids that name nothing)`).toBe(404);
      expect(normal(res.text), what).toBe(normal(ghost.text));
    }
  });

  it("A's token sees A's rows on the tenant routes, and only A's", async () => {
    const messages = await call(tokenA, 'GET', '/api/v1/messages');
    expect(messages.status).toBe(200);
    const items = (messages.body as { items: Array<{ id: string; tenant_id: string }> }).items;
    expect(items.map((m) => m.id)).toContain(own.A.message);
    expect(items.every((m) => m.tenant_id === 'm_A')).toBe(true);

    const one = await call(tokenA, 'GET', `/api/v1/messages/${own.A.message}`);
    expect(one.status).toBe(200);
    expect((one.body as { deliveries: Array<{ attempt_history: unknown[] }> }).deliveries[0]!.attempt_history.length).toBeGreaterThan(0);

    const deliveries = await call(tokenA, 'GET', '/api/v1/deliveries');
    const dIds = (deliveries.body as { items: Array<{ id: number; message_id: string }> }).items.map((d) => d.message_id);
    expect(dIds).toContain(own.A.message);
    expect(dIds).not.toContain(own.B.message);

    const endpoints = await call(tokenA, 'GET', '/api/v1/endpoints');
    expect((endpoints.body as { items: Array<{ id: string }> }).items.map((e) => e.id)).toEqual([own.A.endpoint]);
    expect((await call(tokenA, 'GET', `/api/v1/endpoints/${own.A.endpoint}`)).status).toBe(200);

    const csv = await call(tokenA, 'GET', '/api/v1/deliveries/export.csv');
    expect(csv.status).toBe(200);
    expect(csv.text).toContain(own.A.message);
    expect(csv.text).not.toContain(own.B.message);
    const xlsx = await app.inject({ method: 'GET', url: '/api/v1/deliveries/export.xlsx', headers: { authorization: `Bearer ${tokenA}` } });
    expect(xlsx.statusCode).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    const cells = workbook.worksheets[0]!.getSheetValues().flat().map(String).join(' ');
    expect(cells).toContain(own.A.message);
    expect(cells).not.toContain(own.B.message);
    const pdf = await call(tokenA, 'GET', '/api/v1/deliveries/export.pdf');
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');

    // An endpoint made by A is A's, whatever the body says of the tenant (naming another is naming none).
    const made = await call(tokenA, 'POST', '/api/v1/endpoints', { url: `${sink.url}/A2` });
    expect(made.status, made.text).toBe(201);
    expect((made.body as { tenant_id: string }).tenant_id).toBe('m_A');
    const other = await call(tokenA, 'POST', '/api/v1/endpoints', { url: `${sink.url}/A3`, tenant_id: 'm_B' });
    expect(other.status).toBe(404);
    const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM endpoints WHERE tenant_id = 'm_B'");
    expect(rows[0]!.n).toBe(1);

    // A test.ping reaches A's endpoint and is A's message.
    const before = sink.requests.length;
    const ping = await call(tokenA, 'POST', `/api/v1/endpoints/${own.A.endpoint}/ping`);
    expect(ping.status, ping.text).toBe(202);
    await sink.waitFor(before + 1, 30_000);
    const pinged = await t.db.query<{ tenant_id: string }>('SELECT tenant_id FROM outbox_messages WHERE id = $1', [(ping.body as { id: string }).id]);
    expect(pinged.rows[0]?.tenant_id).toBe('m_A');
    // The change is audited with its tenant and the token that made it.
    const audit = await t.db.query<{ actor: string; tenant_id: string; role: string }>(
      "SELECT actor, tenant_id, role FROM audit_events WHERE route = '/api/v1/endpoints/:id/ping' AND status = 202 ORDER BY id DESC LIMIT 1",
    );
    expect(audit.rows[0]).toEqual({ actor: expect.stringMatching(/^tenant:m_A\/ttk_[0-9a-f]+$/), tenant_id: 'm_A', role: 'operator' });

    // Replays: one message, and the failed ones of a window (none failed: zero, and B's are untouched).
    expect((await call(tokenA, 'POST', `/api/v1/messages/${own.A.message}/replay`, {})).body).toEqual({ replayed: 1 });
    expect((await call(tokenA, 'POST', '/api/v1/deliveries/replay-failed', {})).status).toBe(200);
    const rotated = await call(tokenA, 'POST', `/api/v1/endpoints/${own.A.endpoint}/rotate-secret`, {});
    expect(rotated.status, rotated.text).toBe(200);
  });

  it("no replay sends a tenant's message to another tenant's endpoint", async () => {
    // A failed delivery of A's message to B's endpoint, as an operator's replay to any endpoint could
    // make before migration 025 (its upgrade keeps such a row as the message's tenant's).
    const crossed = (
      await t.db.query<{ id: string }>(
        `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status) VALUES ('m_A', $1, $2, 'failed') RETURNING id::text AS id`,
        [own.A.message, own.B.endpoint],
      )
    ).rows[0]!.id;
    await t.db.query(`INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) VALUES ('m_A', $1, $2, true)`, [crossed, own.B.endpoint]);
    await call(tokenA, 'POST', `/api/v1/messages/${own.A.message}/replay`, {});
    expect((await admin('POST', '/deliveries/replay-failed', {})).status).toBe(200);
    const { rows } = await t.db.query<{ status: string }>('SELECT status FROM outbox_deliveries WHERE id = $1', [crossed]);
    expect(rows[0]!.status).toBe('failed');
    // Nor does the operator's replay to one endpoint: B's endpoint is not one of A's message's tenant.
    const toB = await admin('POST', `/messages/${own.A.message}/replay`, { endpoint_id: own.B.endpoint });
    expect(toB).toMatchObject({ status: 400, body: { error: 'VALIDATION_FAILED' } });
    await t.db.query('DELETE FROM outbox_queue WHERE delivery_id = $1', [crossed]);
    await t.db.query('DELETE FROM outbox_deliveries WHERE id = $1', [crossed]);
  });

  it('replay-failed of a tenant re-queues its own failed deliveries only', async () => {
    await t.db.query("UPDATE outbox_deliveries SET status = 'failed' WHERE id IN ($1, $2)", [own.A.delivery, own.B.delivery]);
    await t.db.query(
      'INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) SELECT d.tenant_id, d.id, d.endpoint_id, true FROM outbox_deliveries d WHERE (d.id, d.endpoint_id) IN (($1, $2), ($3, $4)) ON CONFLICT DO NOTHING',
      [own.A.delivery, own.A.endpoint, own.B.delivery, own.B.endpoint],
    );
    await t.db.query('UPDATE outbox_queue SET failed = true WHERE delivery_id IN ($1, $2)', [own.A.delivery, own.B.delivery]);
    const res = await call(tokenA, 'POST', '/api/v1/deliveries/replay-failed', {});
    expect(res.body).toEqual({ replayed: 1 });
    const { rows } = await t.db.query<{ id: string; status: string }>('SELECT id::text AS id, status FROM outbox_deliveries WHERE id IN ($1, $2)', [
      own.A.delivery,
      own.B.delivery,
    ]);
    expect(rows.find((r) => r.id === own.B.delivery)?.status).toBe('failed');
    expect(rows.find((r) => r.id === own.A.delivery)?.status).not.toBe('failed');
  });

  it("A's token on the routes without a tenant meaning answers as if they did not exist", async () => {
    for (const [method, url] of [
      ['GET', '/api/v1/inbox'],
      ['GET', '/api/v1/tenants'],
      ['GET', '/api/v1/operators'],
      ['GET', '/api/v1/audit'],
      ['POST', '/api/v1/messages'],
    ] as const) {
      const res = await call(tokenA, method, url, method === 'POST' ? { type: 'x' } : undefined);
      expect(res.status, `${method} ${url}`).toBe(404);
      expect((res.body as { error: string }).error).toBe('NOT_FOUND');
      // The same answer as a route that does not exist at all.
      const none = await call(tokenA, method, `${url}-nothing-here`);
      expect(none.status).toBe(404);
    }
  });

  it('makes, lists and revokes tenant tokens; a revoked token is refused with 401; only the admin token manages them', async () => {
    const made = await admin('POST', '/tenants/m_B/tokens', { role: 'viewer' });
    expect(made.status).toBe(201);
    const { id, token, role, tenant_id } = made.body as { id: string; token: string; role: string; tenant_id: string };
    expect(token).toMatch(/^tkt_/);
    expect(id).toMatch(/^ttk_/);
    expect({ role, tenant_id }).toEqual({ role: 'viewer', tenant_id: 'm_B' });
    // Stored hashed: the token is nowhere in the store.
    const stored = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tenant_tokens WHERE hash = $1 OR prefix = $1', [token]);
    expect(stored.rows[0]!.n).toBe(0);

    const list = await admin('GET', '/tenants/m_B/tokens');
    expect((list.body as { items: Array<{ id: string; token?: string }> }).items).toEqual([expect.objectContaining({ id, role: 'viewer' })]);
    expect(JSON.stringify(list.body)).not.toContain(token);

    expect((await call(token, 'GET', '/api/v1/messages')).status).toBe(200);
    // A viewer cannot change anything; the refusal names no row.
    expect((await call(token, 'POST', `/api/v1/endpoints/${own.B.endpoint}/ping`)).status).toBe(403);
    // Tenants' tokens cannot manage tokens: the route does not exist for them.
    expect((await call(token, 'GET', '/api/v1/tenants/m_B/tokens')).status).toBe(404);
    // Revoking through another tenant's id is no token of that tenant.
    expect((await admin('POST', `/tenants/m_A/tokens/${id}/revoke`)).status).toBe(404);

    // Signing in with it opens a session of its tenant, which ends with the token.
    const signedIn = await call(undefined, 'POST', '/api/v1/session', { token });
    expect(signedIn.status).toBe(201);
    const asB = { cookie: String(signedIn.headers['set-cookie']).split(';')[0]! };
    expect((await call(undefined, 'GET', '/api/v1/session', undefined, asB)).body).toMatchObject({ role: 'viewer', tenant: { id: 'm_B' } });
    expect((await call(undefined, 'GET', `/api/v1/messages/${own.A.message}`, undefined, asB)).status).toBe(404);

    expect((await admin('POST', `/tenants/m_B/tokens/${id}/revoke`)).status).toBe(200);
    const refused = await call(token, 'GET', '/api/v1/messages');
    expect(refused.status).toBe(401);
    expect((await call(undefined, 'GET', '/api/v1/session', undefined, asB)).status).toBe(401);
    const audited = await t.db.query<{ actor: string; tenant_id: string }>(
      "SELECT actor, tenant_id FROM audit_events WHERE status = 401 AND tenant_id IS NULL AND route = '/api/v1/messages' ORDER BY id DESC LIMIT 1",
    );
    expect(audited.rows[0]?.actor).toBe('unknown');
    expect((await admin('GET', '/tenants/m_B/tokens')).body).toEqual({ items: [] });
    expect((await admin('GET', '/tenants/m_nope/tokens')).status).toBe(404);
    expect((await admin('POST', '/tenants/m_nope/tokens', { role: 'viewer' })).status).toBe(404);
    // An operator token cannot make tenant tokens.
    const op = await admin('POST', '/operators', { name: 'tenant-auth-op', role: 'operator' });
    expect((await call((op.body as { token: string }).token, 'POST', '/api/v1/tenants/m_B/tokens', { role: 'viewer' })).status).toBe(403);
  });

  const sessionCount = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM dashboard_sessions')).rows[0]!.n;
  const portalLink = async (payload: unknown = {}) => {
    const res = await admin('POST', '/tenants/m_A/portal-links', payload);
    expect(res.status, res.text).toBe(201);
    const { url } = res.body as { url: string; expires_at: string };
    return new URL(url).pathname;
  };

  it('a portal link opens a session of its tenant once; the second use and an expired link get 410 and no session', async () => {
    const res = await admin('POST', '/tenants/m_A/portal-links', { ttl: '10m', role: 'operator' });
    const { url, expires_at } = res.body as { url: string; expires_at: string };
    expect(url).toMatch(/^http:\/\/tekil\.test\/portal\/link\/[A-Za-z0-9_-]{43}$/);
    const ttl = new Date(expires_at).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(9 * 60_000);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000 + 5_000);
    const path = new URL(url).pathname;

    const sessions = await sessionCount();
    // A HEAD (a link checker) does not spend it.
    expect((await app.inject({ method: 'HEAD', url: path })).statusCode).toBe(404);
    const opened = await call(undefined, 'GET', path);
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/portal/');
    const cookie = String(opened.headers['set-cookie']);
    expect(cookie).toMatch(/^tekil_portal=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(await sessionCount()).toBe(sessions + 1);

    const session = await call(undefined, 'GET', '/api/v1/session', undefined, { cookie: cookie.split(';')[0]!, 'x-tekil-portal': '1' });
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({
      role: 'operator',
      tenant: { id: 'm_A', name: 'Merchant A' },
      portal: { name: 'Paymos', logo_url: null, accent_color: '#0a7cff' },
    });
    const csrf = (session.body as { csrf: string }).csrf;
    expect(csrf).toEqual(expect.any(String));
    // The session sees A's rows, 404 for B's, and changes need the CSRF header.
    const asA = { cookie: cookie.split(';')[0]!, 'x-tekil-portal': '1' };
    expect((await call(undefined, 'GET', `/api/v1/messages/${own.A.message}`, undefined, asA)).status).toBe(200);
    expect((await call(undefined, 'GET', `/api/v1/messages/${own.B.message}`, undefined, asA)).status).toBe(404);
    expect((await call(undefined, 'GET', '/api/v1/tenants', undefined, asA)).status).toBe(404);
    expect((await call(undefined, 'POST', `/api/v1/endpoints/${own.A.endpoint}/ping`, undefined, asA)).status).toBe(403);
    expect((await call(undefined, 'POST', `/api/v1/endpoints/${own.A.endpoint}/ping`, undefined, { ...asA, 'x-tekil-csrf': csrf })).status).toBe(202);

    const again = await call(undefined, 'GET', path);
    expect(again.status).toBe(410);
    expect(again.headers['content-type']).toMatch(/^text\/html/);
    expect(again.text).toContain('PORTAL_LINK_GONE');
    expect(again.headers['set-cookie']).toBeUndefined();

    const expiring = await portalLink({ ttl: '10s' });
    await t.db.query("UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL");
    const expired = await call(undefined, 'GET', expiring);
    expect(expired.status).toBe(410);
    expect(expired.headers['set-cookie']).toBeUndefined();
    expect((await call(undefined, 'GET', '/portal/link/not-a-link-at-all-0123456789')).status).toBe(410);
    expect(await sessionCount()).toBe(sessions + 1);

    // Every use is audited, with its tenant.
    const audit = await t.db.query<{ status: number; tenant_id: string | null; error_code: string | null }>(
      "SELECT status, tenant_id, error_code FROM audit_events WHERE route = '/portal/link/:token' ORDER BY id",
    );
    expect(audit.rows).toEqual([
      { status: 303, tenant_id: 'm_A', error_code: null },
      { status: 410, tenant_id: 'm_A', error_code: 'PORTAL_LINK_GONE' },
      { status: 410, tenant_id: 'm_A', error_code: 'PORTAL_LINK_GONE' },
      { status: 410, tenant_id: null, error_code: 'PORTAL_LINK_GONE' },
    ]);
    // Refused input: a ttl past a day, a role that is not a tenant's.
    expect((await admin('POST', '/tenants/m_A/portal-links', { ttl: '2d' })).status).toBe(400);
    expect((await admin('POST', '/tenants/m_A/portal-links', { role: 'admin' })).status).toBe(400);
    expect((await admin('POST', '/tenants/m_nope/portal-links', {})).status).toBe(404);
  });

  it("a portal link never replaces the panel's session in the browser that opens it (an admin's Open portal, or another's link: login CSRF)", async () => {
    /** A browser's cookie jar: a Set-Cookie replaces the cookie of its name. */
    const jar = new Map<string, string>();
    const keep = (setCookie: unknown) => {
      for (const line of [setCookie].flat()) {
        if (typeof line !== 'string') continue;
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
    };
    const cookies = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const signedIn = await call(undefined, 'POST', '/api/v1/session', { token: ADMIN });
    expect(signedIn.status).toBe(201);
    keep(signedIn.headers['set-cookie']);
    const panel = () => call(undefined, 'GET', '/api/v1/tenants', undefined, { cookie: cookies() });
    expect((await panel()).status).toBe(200);

    // The admin clicks Open portal: the portal opens as the tenant, and the panel stays the admin's.
    keep((await call(undefined, 'GET', await portalLink())).headers['set-cookie']);
    expect((await panel()).status).toBe(200);
    const portal = await call(undefined, 'GET', '/api/v1/session', undefined, { cookie: cookies(), 'x-tekil-portal': '1' });
    expect(portal.body).toMatchObject({ tenant: { id: 'm_A' } });
    const asPanel = await call(undefined, 'GET', '/api/v1/session', undefined, { cookie: cookies() });
    expect(asPanel.body).toMatchObject({ name: 'admin', role: 'admin' });
    expect((asPanel.body as { tenant?: unknown }).tenant).toBeUndefined();
    // Signing out of the portal leaves the panel signed in.
    const csrf = (portal.body as { csrf: string }).csrf;
    keep(
      (await call(undefined, 'DELETE', '/api/v1/session', undefined, { cookie: cookies(), 'x-tekil-portal': '1', 'x-tekil-csrf': csrf })).headers['set-cookie'],
    );
    expect((await panel()).status).toBe(200);

    // Someone else's link opened in a browser with no panel session signs the panel in to nothing.
    const victim = await call(undefined, 'GET', await portalLink());
    const planted = String(victim.headers['set-cookie']).split(';')[0]!;
    expect((await call(undefined, 'GET', '/api/v1/session', undefined, { cookie: planted })).status).toBe(401);
  });

  it("the live stream gives a tenant its own outbound deliveries, never the inbox or another tenant's", async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const abort = new AbortController();
    const res = await fetch(`${address}/api/v1/events`, { headers: { authorization: `Bearer ${tokenA}` }, signal: abort.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    // One read in flight at a time: a read left behind by a timeout still delivers its chunk.
    let pending: ReturnType<typeof reader.read> | undefined;
    const readUntil = async (done: () => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      while (!done() && Date.now() < deadline) {
        pending ??= reader.read();
        const chunk = await Promise.race([pending, new Promise<undefined>((r) => setTimeout(() => r(undefined), 500))]);
        if (chunk === undefined) continue;
        pending = undefined;
        if (chunk.value) text += new TextDecoder().decode(chunk.value);
        if (chunk.done) return;
      }
    };
    await readUntil(() => text.includes(': connected'), 10_000);
    // The stream's first look only learns what is there (a page shows it already), and sends nothing.
    // Wait for that look by its effect: publish for A until one of them is streamed; whatever is
    // published from then on comes after the first look, however long the stream took to make it.
    let probeId = '';
    for (let round = 0; round < 20 && !(probeId && text.includes(probeId)); round++) {
      probeId = ((await admin('POST', '/messages', { tenant_id: 'm_A', type: 'invoice.paid', resource_id: `inv_A_probe_${round}` })).body as { id: string }).id;
      await readUntil(() => text.includes(probeId), 5_000);
    }
    expect(text).toContain(probeId);
    // B's message, then A's: a look that sees A's sees B's too, so had it leaked it would be there.
    const b = await admin('POST', '/messages', { tenant_id: 'm_B', type: 'invoice.paid', resource_id: 'inv_B_live' });
    const a = await admin('POST', '/messages', { tenant_id: 'm_A', type: 'invoice.paid', resource_id: 'inv_A_live' });
    const aId = (a.body as { id: string }).id;
    await readUntil(() => text.includes(aId), 30_000);
    abort.abort();
    expect(text).toContain('event: outbound');
    expect(text).toContain(aId);
    expect(text).not.toContain((b.body as { id: string }).id);
    expect(text).not.toContain('event: delivery');
  }, 120_000);

  it('serves /portal/ with its own CSP (frame-ancestors none without embedding); the dashboard keeps its own', async () => {
    const portal = await call(undefined, 'GET', '/portal/');
    expect(portal.status).toBe(200);
    expect(portal.headers['content-type']).toMatch(/^text\/html/);
    expect(portal.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(portal.headers['x-frame-options']).toBe('DENY');
    const dashboard = await call(undefined, 'GET', '/');
    expect(dashboard.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await call(undefined, 'GET', '/portal/assets/index.html')).status).toBe(404);
    expect((await call(undefined, 'GET', '/portal/assets/..%2F..%2Fpackage.json')).status).toBe(404);
  });
});

describe('the portal embedded in a provider panel (portal.frame_ancestors)', () => {
  let t: TestDb;
  let app: FastifyInstance;

  const start = async (portal: ConfigInput['portal']) => {
    const config = parseConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-tenant-embed-')) }, portal });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    return buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
  };

  beforeAll(async () => {
    t = await createTestDb();
    app = await start({
      frame_ancestors: ['https://panel.provider.example', 'https://panel2.provider.example:8443'],
      public_url: 'https://webhooks.provider.example/',
      logo_url: 'https://cdn.provider.example/logo.svg',
    });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('names the allowed origins in frame-ancestors on /portal/ only, and sets the cookie SameSite=None; Secure; Partitioned', async () => {
    const portal = await app.inject({ method: 'GET', url: '/portal/' });
    const csp = String(portal.headers['content-security-policy']);
    expect(csp).toContain('frame-ancestors https://panel.provider.example https://panel2.provider.example:8443');
    expect(csp).toContain("img-src 'self' https://cdn.provider.example");
    expect(portal.headers['x-frame-options']).toBeUndefined();
    for (const url of ['/', '/api/v1/openapi.json']) {
      const other = await app.inject({ method: 'GET', url });
      expect(String(other.headers['content-security-policy'] ?? "frame-ancestors 'none'"), url).toContain("frame-ancestors 'none'");
    }
    expect((await app.inject({ method: 'GET', url: '/' })).headers['x-frame-options']).toBe('DENY');

    await app.inject({ method: 'POST', url: '/api/v1/tenants', headers: { authorization: `Bearer ${ADMIN}` }, payload: { id: 'm_embed' } });
    const link = await app.inject({ method: 'POST', url: '/api/v1/tenants/m_embed/portal-links', headers: { authorization: `Bearer ${ADMIN}` }, payload: {} });
    const { url } = link.json() as { url: string };
    expect(url).toMatch(/^https:\/\/webhooks\.provider\.example\/portal\/link\//);
    const opened = await app.inject({ method: 'GET', url: new URL(url).pathname });
    expect(opened.statusCode).toBe(303);
    const cookie = String(opened.headers['set-cookie']);
    expect(cookie).toMatch(/^tekil_portal=[^;]+; Path=\/; HttpOnly; SameSite=None; Max-Age=\d+; Secure; Partitioned$/);
    // A browser may hold a partitioned and an unpartitioned cookie of the same name (a second session
    // here): signing out closes every session it sends, and clears both cookies with SameSite=None, the
    // only kind a page framed by another site may change.
    const second = await app.inject({
      method: 'POST',
      url: '/api/v1/tenants/m_embed/portal-links',
      headers: { authorization: `Bearer ${ADMIN}` },
      payload: {},
    });
    const secondOpened = await app.inject({ method: 'GET', url: new URL((second.json() as { url: string }).url).pathname });
    const both = `${cookie.split(';')[0]!}; ${String(secondOpened.headers['set-cookie']).split(';')[0]!}`;
    const whoami = (c: string) => app.inject({ method: 'GET', url: '/api/v1/deliveries', headers: { cookie: c, 'x-tekil-portal': '1' } });
    for (const c of both.split('; ')) expect((await whoami(c)).statusCode).toBe(200);
    const out = await app.inject({ method: 'DELETE', url: '/api/v1/session', headers: { cookie: both, 'x-tekil-portal': '1' } });
    expect(out.statusCode).toBe(200);
    expect(out.headers['set-cookie']).toEqual([
      'tekil_portal=; Path=/; HttpOnly; SameSite=None; Max-Age=0; Secure; Partitioned',
      'tekil_portal=; Path=/; HttpOnly; SameSite=None; Max-Age=0; Secure',
    ]);
    for (const c of both.split('; ')) expect((await whoami(c)).statusCode).toBe(401);
  });

  it('refuses a frame ancestor that is not an origin', () => {
    expect(() => parseConfig({ portal: { frame_ancestors: ['https://panel.example.com/path'] } })).toThrow(/frame_ancestors/);
    expect(() => parseConfig({ portal: { frame_ancestors: ['*'] } })).toThrow(/frame_ancestors/);
  });
});
