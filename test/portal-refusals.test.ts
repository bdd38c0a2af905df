import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import type { Context } from '../src/service.js';
import { resolveSettings } from '../src/settings.js';
import { createTestDb, type TestDb } from './helpers/db.js';

const ADMIN = 'portal-refusals-admin-token';

/** Portal links and sessions refused where they must be: a forged Host, a disabled tenant, a failed CSRF check. */
describe('the portal: where links point, a disabled tenant, a refused CSRF check', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let base = '';

  const admin = async (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await request(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const open = async (url: string) => {
    const res = await app.inject({ method: 'GET', url: new URL(url).pathname });
    return { status: res.statusCode, cookie: String(res.headers['set-cookie'] ?? '').split(';')[0]! };
  };
  const asPortal = (cookie: string, method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}) =>
    app.inject({ method, url: `/api/v1${url}`, headers: { cookie, 'x-tekil-portal': '1', ...headers } });

  beforeAll(async () => {
    t = await createTestDb();
    // No portal.public_url, no trusted proxy.
    const config = parseConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-portal-refusals-')) } });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    expect((await admin('POST', '/tenants', { id: 'm_p', name: 'Merchant' })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it("makes links with the address tekil answered on, never the request's Host header", async () => {
    const made = await admin('POST', '/tenants/m_p/portal-links', {}, { host: 'evil.example:1' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(String(made.body.url)).toMatch(new RegExp(`^${base.replace(/\./g, '\\.')}/portal/link/[A-Za-z0-9_-]{43}$`));
  });

  it("a disabled tenant's portal does not open: no new link, an earlier link refused, its sessions signed out", async () => {
    const earlier = String((await admin('POST', '/tenants/m_p/portal-links', {})).body.url);
    const session = await open(String((await admin('POST', '/tenants/m_p/portal-links', {})).body.url));
    expect(session.status).toBe(303);
    expect((await asPortal(session.cookie, 'GET', '/session')).statusCode).toBe(200);

    expect((await admin('PATCH', '/tenants/m_p', { disabled: true })).status).toBe(200);
    const refused = await admin('POST', '/tenants/m_p/portal-links', {});
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'CONFLICT' });
    expect((await open(earlier)).status).toBe(410);
    const signedOut = await asPortal(session.cookie, 'GET', '/session');
    expect(signedOut.statusCode).toBe(401);
    expect(signedOut.json()).toMatchObject({ error: 'UNAUTHORIZED' });

    // Enabled again, the portal opens again (the session was refused, not deleted: it still expires as it would).
    expect((await admin('PATCH', '/tenants/m_p', { disabled: false })).status).toBe(200);
    expect((await asPortal(session.cookie, 'GET', '/session')).statusCode).toBe(200);
  });

  it("a download or an EventSource, which send no header, pick the portal's cookie with ?portal=1, which no route reads as a filter", async () => {
    const session = await open(String((await admin('POST', '/tenants/m_p/portal-links', {})).body.url));
    const csv = await app.inject({ method: 'GET', url: '/api/v1/deliveries/export.csv?status=failed&portal=1', headers: { cookie: session.cookie } });
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect((await app.inject({ method: 'GET', url: '/api/v1/deliveries/export.csv', headers: { cookie: session.cookie } })).statusCode).toBe(401);
  });

  it("audits a refused CSRF check with the session's tenant as its actor, not unknown", async () => {
    const session = await open(String((await admin('POST', '/tenants/m_p/portal-links', { role: 'operator' })).body.url));
    const refused = await asPortal(session.cookie, 'POST', '/deliveries/replay-failed', { 'x-tekil-csrf': 'not-the-token' });
    expect(refused.statusCode).toBe(403);
    const { rows } = await t.db.query<{ actor: string; tenant_id: string | null; status: number }>(
      "SELECT actor, tenant_id, status FROM audit_events WHERE route = '/api/v1/deliveries/replay-failed' ORDER BY id DESC LIMIT 1",
    );
    expect(rows[0]).toMatchObject({ status: 403, tenant_id: 'm_p' });
    expect(rows[0]!.actor).not.toBe('unknown');
    expect(rows[0]!.actor).toContain('m_p');
  });
});
