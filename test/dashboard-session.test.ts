import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { SOURCE, insertInvoiceDelivery, testContext, workerTestConfig } from './helpers/inbox.js';

const ADMIN = 'dashboard-session-admin';

/** Browser sessions over a real socket: the cookie's attributes, CSRF on changes, sign-out, revocation. */
describe('dashboard sessions', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let base: string;

  const call = async (method: 'GET' | 'POST' | 'DELETE', path: string, opts: { cookie?: string; csrf?: string; bearer?: string; json?: unknown } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.cookie) headers.cookie = opts.cookie;
    if (opts.csrf) headers['x-tekil-csrf'] = opts.csrf;
    if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
    if (opts.json !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`${base}${path}`, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, json: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
  const signIn = async (token: string) => {
    const res = await call('POST', '/api/v1/session', { json: { token } });
    expect(res.status).toBe(201);
    const setCookie = String(res.headers['set-cookie']);
    return { setCookie, cookie: setCookie.split(';')[0]!, csrf: res.json.csrf_token as string, body: res.json };
  };

  beforeAll(async () => {
    t = await createTestDb();
    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-session-')) } });
    app = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken: ADMIN });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('a wrong token opens no session and sets no cookie', async () => {
    const res = await call('POST', '/api/v1/session', { json: { token: 'nope' } });
    expect(res.status).toBe(401);
    expect(res.json.error).toBe('UNAUTHORIZED');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('the cookie is HttpOnly and SameSite=Strict (not Secure over plain http), and only its hash is stored', async () => {
    const { setCookie, cookie, body } = await signIn(ADMIN);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toMatch(/Secure/);
    expect(body).toMatchObject({ role: 'admin', name: 'admin' });
    const id = cookie.split('=')[1]!;
    const { rows } = await t.db.query<{ id_hash: string }>('SELECT id_hash FROM dashboard_sessions');
    expect(rows.map((r) => r.id_hash)).not.toContain(id);
    expect((await call('GET', '/api/v1/inbox', { cookie })).status).toBe(200);
  });

  it('X-Forwarded-Proto makes the cookie Secure only from a proxy listed in server.trust_proxy', async () => {
    // Straight from a client (no proxy is trusted by default): the header is ignored.
    const spoofed = await request(`${base}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
      body: JSON.stringify({ token: ADMIN }),
    });
    await spoofed.body.text();
    expect(String(spoofed.headers['set-cookie'])).not.toMatch(/Secure/);

    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-session-')) }, server: { trust_proxy: ['127.0.0.1'] } });
    const behind = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken: ADMIN });
    try {
      const signInVia = async (remoteAddress: string) => {
        const res = await behind.inject({
          method: 'POST',
          url: '/api/v1/session',
          remoteAddress,
          headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' },
          payload: { token: ADMIN },
        });
        expect(res.statusCode).toBe(201);
        return String(res.headers['set-cookie']);
      };
      // Still the dashboard's cookie: Strict, never Partitioned; Secure because the proxy ended TLS.
      expect(await signInVia('127.0.0.1')).toMatch(/^tekil_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
      expect(await signInVia('10.9.9.9')).not.toMatch(/Secure/);
      const { rows } = await t.db.query<{ address: string }>("SELECT address FROM audit_events WHERE route = '/api/v1/session' ORDER BY id DESC LIMIT 2");
      // The trusted proxy's request is audited under its client's address, the other under the socket's.
      expect(rows.map((r) => r.address)).toEqual(['10.9.9.9', '203.0.113.9']);
    } finally {
      await behind.close();
    }
  });

  it('a change made with the cookie needs the CSRF header; with it, the change happens', async () => {
    await insertInvoiceDelivery(t.db, { eventId: 'evt_csrf', invoiceId: 'inv_csrf', orderId: 'ord_csrf', status: 'paid' });
    await t.db.query(`UPDATE inbox_deliveries SET status = 'dead' WHERE source = $1 AND event_id = 'evt_csrf'`, [SOURCE]);
    const status = async () => (await t.db.query<{ status: string }>(`SELECT status FROM inbox_deliveries WHERE event_id = 'evt_csrf'`)).rows[0]?.status;
    const { cookie, csrf } = await signIn(ADMIN);

    const without = await call('POST', `/api/v1/inbox/${SOURCE}/evt_csrf/replay`, { cookie });
    expect(without.status).toBe(403);
    expect(without.json.error).toBe('FORBIDDEN');
    // One character changed (to one it cannot already be), so the token is wrong every run.
    const wrongCsrf = `${csrf.slice(0, -1)}${csrf.endsWith('x') ? 'y' : 'x'}`;
    const wrong = await call('POST', `/api/v1/inbox/${SOURCE}/evt_csrf/replay`, { cookie, csrf: wrongCsrf });
    expect(wrong.status).toBe(403);
    expect(await status()).toBe('dead');

    const ok = await call('POST', `/api/v1/inbox/${SOURCE}/evt_csrf/replay`, { cookie, csrf });
    expect(ok.status).toBe(200);
    expect(await status()).toBe('pending');
    // The CSRF token is readable by the panel's own script through the session, never from the cookie.
    expect((await call('GET', '/api/v1/session', { cookie })).json.csrf_token).toBe(csrf);
  });

  it("a viewer's session keeps the viewer's role", async () => {
    const made = await call('POST', '/api/v1/operators', { bearer: ADMIN, json: { name: 'watcher', role: 'viewer' } });
    const { cookie, csrf } = await signIn(made.json.token as string);
    const res = await call('POST', '/api/v1/inbox/replay', { cookie, csrf, json: { status: 'dead' } });
    expect(res.status).toBe(403);
    expect(res.json.message).toMatch(/viewer/);
  });

  it("signing out ends the session; revoking an operator ends the operator's sessions", async () => {
    const admin = await signIn(ADMIN);
    const out = await call('DELETE', '/api/v1/session', { cookie: admin.cookie });
    expect(out.status).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/Max-Age=0/);
    expect((await call('GET', '/api/v1/inbox', { cookie: admin.cookie })).status).toBe(401);

    const made = await call('POST', '/api/v1/operators', { bearer: ADMIN, json: { name: 'leaver', role: 'operator' } });
    const op = await signIn(made.json.token as string);
    expect((await call('GET', '/api/v1/inbox', { cookie: op.cookie })).status).toBe(200);
    expect((await call('POST', '/api/v1/operators/leaver/revoke', { bearer: ADMIN })).status).toBe(200);
    expect((await call('GET', '/api/v1/inbox', { cookie: op.cookie })).status).toBe(401);
  });
});
