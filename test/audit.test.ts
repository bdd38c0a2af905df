import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/index.js';
import { createRetentionSweeper } from '../src/retention/sweeper.js';
import type { Context } from '../src/service.js';
import type { OpenApiDocument } from '../src/api/openapi.js';
import { UNAUDITED_ROUTES } from '../src/audit/trail.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';

const ADMIN = 'audit-test-admin-token';
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

interface AuditRow {
  id: string;
  actor: string;
  role: string | null;
  address: string | null;
  method: string;
  route: string;
  target: Record<string, unknown>;
  status: number;
  error_code: string | null;
}

/** `/api/v1/endpoints/{id}` → `/api/v1/endpoints/:id`, as Fastify names the route and the audit records it. */
const template = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');
const concrete = (path: string): string => path.replace(/\{[^}]+\}/g, 'x');

describe('the audit trail', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let operatorToken = '';
  let viewerToken = '';
  let ctx: Context;

  const call = (token: string | undefined, method: string, url: string, payload?: unknown, remoteAddress?: string) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
    });
  const latest = async (): Promise<AuditRow | undefined> =>
    (
      await t.db.query<AuditRow>(
        'SELECT id::text AS id, actor, role, address, method, route, target, status, error_code FROM audit_events ORDER BY audit_events.id DESC LIMIT 1',
      )
    ).rows[0];
  const count = async (): Promise<number> => Number((await t.db.query<{ n: string }>('SELECT count(*) AS n FROM audit_events')).rows[0]!.n);
  const allText = async (): Promise<string> => JSON.stringify((await t.db.query('SELECT * FROM audit_events')).rows);

  beforeAll(async () => {
    t = await createTestDb();
    const config = workerTestConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-audit-')) },
      sending: { allow_networks: ['127.0.0.0/8'] },
      audit: { sign_in: { failures: 5, window: '1m' } },
    });
    ctx = testContext(t.db, config);
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
    operatorToken = (await call(ADMIN, 'POST', '/api/v1/operators', { name: 'olcay', role: 'operator' })).json<{ token: string }>().token;
    viewerToken = (await call(ADMIN, 'POST', '/api/v1/operators', { name: 'vedat', role: 'viewer' })).json<{ token: string }>().token;
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('every mutating route of the OpenAPI document leaves a row with its route and outcome', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as OpenApiDocument;
    const mutating = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .map((m) => m.toUpperCase())
        .filter((m) => !READS.has(m))
        .map((method) => ({ method, path })),
    );
    expect(mutating.length).toBeGreaterThanOrEqual(20);
    for (const { method, path } of mutating) {
      for (const token of [ADMIN, viewerToken]) {
        const before = await count();
        const res = await call(token, method, concrete(path), {}, '10.1.2.3');
        const row = await latest();
        const what = `${method} ${path} → ${res.statusCode} ${res.body.slice(0, 200)}`;
        if (UNAUDITED_ROUTES.has(`${method} ${template(path)}`) && res.statusCode !== 401 && res.statusCode !== 429) {
          // The application's own publishing: the message is its record (docs/audit.md).
          expect(await count(), what).toBe(before);
          continue;
        }
        expect(await count(), what).toBe(before + 1);
        expect(row, what).toMatchObject({ method, route: template(path), status: res.statusCode, address: '10.1.2.3' });
        expect(row!.error_code, what).toBe(res.statusCode >= 400 ? (res.json() as { error: string }).error : null);
        // Who: the admin token, or the viewer by name (the sign-in route is public: no caller until it succeeds).
        if (path !== '/api/v1/session' || method !== 'POST') expect(row!.actor, what).toBe(token === ADMIN ? 'admin' : 'vedat');
      }
    }
  });

  it('records who changed what, with the id made, and never a secret or a token', async () => {
    const created = await call(operatorToken, 'POST', '/api/v1/endpoints', { url: 'http://127.0.0.1:9/hook', description: 'shop' });
    expect(created.statusCode, created.body).toBe(201);
    const endpoint = created.json<{ id: string; secret: string }>();
    expect(await latest()).toMatchObject({
      actor: 'olcay',
      role: 'operator',
      route: '/api/v1/endpoints',
      status: 201,
      target: { id: endpoint.id, body: { url: 'http://127.0.0.1:9/hook', description: 'shop' } },
    });

    const own = 'whsec_' + Buffer.from('a secret brought from elsewhere').toString('base64');
    expect((await call(operatorToken, 'POST', '/api/v1/endpoints', { url: 'http://127.0.0.1:9/b', secret: own })).statusCode).toBe(201);
    expect((await latest())!.target).toMatchObject({ body: { secret: '[withheld]' } });

    const rotated = await call(operatorToken, 'POST', `/api/v1/endpoints/${endpoint.id}/rotate-secret`, { window: '1h' });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(await latest()).toMatchObject({ route: '/api/v1/endpoints/:id/rotate-secret', target: { params: { id: endpoint.id }, body: { window: '1h' } } });

    const operator = await call(ADMIN, 'POST', '/api/v1/operators', { name: 'nuri', role: 'viewer' });
    const newToken = operator.json<{ token: string }>().token;
    const signIn = await call(undefined, 'POST', '/api/v1/session', { token: newToken });
    expect(signIn.statusCode).toBe(201);
    expect(await latest()).toMatchObject({ actor: 'nuri', role: 'viewer', route: '/api/v1/session', status: 201, target: { body: { token: '[withheld]' } } });

    const text = await allText();
    for (const secret of [endpoint.secret, rotated.json<{ secret: string }>().secret, own, newToken, operatorToken, viewerToken, ADMIN]) {
      expect(secret.length).toBeGreaterThan(10);
      expect(text).not.toContain(secret);
    }
  });

  it('is append-only: no route edits or deletes a row', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as OpenApiDocument;
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/audit')) continue;
      expect(Object.keys(ops), path).toEqual(['get']);
    }
    const rows = await count();
    expect(rows).toBeGreaterThan(0);
    const oldest = (await t.db.query<{ id: string }>('SELECT min(id)::text AS id FROM audit_events')).rows[0]!.id;
    for (const [method, url] of [
      ['DELETE', '/api/v1/audit'],
      ['DELETE', `/api/v1/audit/${oldest}`],
      ['PATCH', `/api/v1/audit/${oldest}`],
      ['PUT', `/api/v1/audit/${oldest}`],
      ['POST', '/api/v1/audit'],
    ] as const) {
      expect((await call(ADMIN, method, url, { actor: 'nobody' })).statusCode, `${method} ${url}`).toBe(404);
    }
    expect(await count()).toBe(rows);
    expect((await t.db.query('SELECT 1 FROM audit_events WHERE id = $1', [oldest])).rows).toHaveLength(1);
  });

  it('GET /api/v1/audit filters, pages with a cursor, and refuses viewers', async () => {
    expect((await call(viewerToken, 'GET', '/api/v1/audit')).statusCode).toBe(403);
    const mine = await call(operatorToken, 'GET', '/api/v1/audit?actor=olcay&limit=2');
    expect(mine.statusCode, mine.body).toBe(200);
    const first = mine.json<{ items: AuditRow[]; next_cursor: string | null }>();
    expect(first.items).toHaveLength(2);
    expect(first.items.every((e) => e.actor === 'olcay')).toBe(true);
    const next = (await call(operatorToken, 'GET', `/api/v1/audit?actor=olcay&limit=2&cursor=${first.next_cursor}`)).json<{ items: AuditRow[] }>();
    expect(next.items.length).toBeGreaterThan(0);
    expect(BigInt(next.items[0]!.id) < BigInt(first.items[1]!.id)).toBe(true);

    const refused = (await call(ADMIN, 'GET', '/api/v1/audit?outcome=refused&route=/api/v1/operators&limit=500')).json<{ items: AuditRow[] }>();
    expect(refused.items.length).toBeGreaterThan(0);
    expect(refused.items.every((e) => e.status >= 400 && e.route === '/api/v1/operators')).toBe(true);
    const future = (await call(ADMIN, 'GET', `/api/v1/audit?since=${new Date(Date.now() + 3_600_000).toISOString()}`)).json<{ items: AuditRow[] }>();
    expect(future.items).toEqual([]);

    const csv = await call(ADMIN, 'GET', '/api/v1/audit/export.csv?actor=olcay');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\n');
    expect(lines[0]).toBe('at,actor,role,address,method,route,target,status,error_code,count,last_at');
    expect(lines.length - 1).toBe((await t.db.query("SELECT 1 FROM audit_events WHERE actor = 'olcay'")).rows.length);
  });

  it('slows a sign-in flood: 429 with Retry-After after the failures allowed, per address and per token prefix, each refusal audited', async () => {
    const address = '10.9.9.9';
    for (let i = 0; i < 5; i++) expect((await call(undefined, 'POST', '/api/v1/session', { token: `wrong-${i}-guess` }, address)).statusCode).toBe(401);
    const limited = await call(undefined, 'POST', '/api/v1/session', { token: operatorToken }, address);
    expect(limited.statusCode, limited.body).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'SIGN_IN_LIMITED' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(await latest()).toMatchObject({ route: '/api/v1/session', status: 429, error_code: 'SIGN_IN_LIMITED', address, actor: 'unknown' });
    // A bearer token from that address waits too; another address is not slowed by it.
    expect((await call(operatorToken, 'GET', '/api/v1/inbox', undefined, address)).statusCode).toBe(429);
    expect((await call(operatorToken, 'GET', '/api/v1/inbox', undefined, '10.9.9.10')).statusCode).toBe(200);

    // Guessing one token from many addresses: limited by the token's first characters.
    for (let i = 0; i < 5; i++) expect((await call(`tko_Zq3W${'x'.repeat(20)}${i}`, 'GET', '/api/v1/inbox', undefined, `10.8.0.${i}`)).statusCode).toBe(401);
    const byPrefix = await call(`tko_Zq3W${'y'.repeat(21)}`, 'GET', '/api/v1/inbox', undefined, '10.8.1.1');
    expect(byPrefix.statusCode).toBe(429);
    const refusals = (
      await t.db.query<AuditRow>("SELECT status, target FROM audit_events WHERE method = 'GET' AND route = '/api/v1/inbox' AND status IN (401, 429)")
    ).rows;
    expect(refusals.filter((r) => r.status === 401)).toHaveLength(5);
    expect(refusals.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(refusals)).not.toContain('tko_Zq3');
    expect(refusals[0]!.target.token).toMatch(/^sha256:[0-9a-f]{12}$/);
  });

  it('never refuses a token that matches because wrong tokens sharing its first characters were limited (the prefix is public)', async () => {
    const prefix = ADMIN.slice(0, 8);
    for (let i = 0; i < 6; i++) {
      const res = await call(`${prefix}-wrong-guess-${i}`, 'GET', '/api/v1/inbox', undefined, `10.7.0.${i}`);
      expect(res.statusCode).toBeOneOf([401, 429]);
    }
    // A wrong token with that prefix is still answered 429 (its guessing is visible in the trail)…
    const wrong = await call(`${prefix}-wrong-guess-x`, 'GET', '/api/v1/inbox', undefined, '10.7.1.1');
    expect(wrong.statusCode, wrong.body).toBe(429);
    // …but the admin token itself, from a fresh address, and its sign-in, are not locked out.
    const valid = await call(ADMIN, 'GET', '/api/v1/inbox', undefined, '10.7.1.2');
    expect(valid.statusCode, valid.body).toBe(200);
    const signIn = await call(undefined, 'POST', '/api/v1/session', { token: ADMIN }, '10.7.1.3');
    expect(signIn.statusCode, signIn.body).toBe(201);
  });

  it('counts the sign-in limit per IPv6 /64, as the connection cap does: a host that picks addresses from its /64 is one address', async () => {
    const statuses: number[] = [];
    for (let i = 1; i <= 8; i++) {
      const res = await call(undefined, 'POST', '/api/v1/session', { token: `v6guess${i}-${'z'.repeat(10)}` }, `2001:db8:7:7::${i.toString(16)}`);
      statuses.push(res.statusCode);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    // Another /64 is not slowed by it.
    expect((await call(undefined, 'POST', '/api/v1/session', { token: 'v6other-guess' }, '2001:db8:7:8::1')).statusCode).toBe(401);
  });

  it('retention ages rows out past retention.audit only (400 days unless set, never under 90)', async () => {
    expect(ctx.config.retention.audit).toBe(400 * 86_400_000);
    expect(() => parseConfig({ retention: { audit: '30d' } })).toThrow(/at least 90d/);
    expect(parseConfig({ retention: { audit: 'never' } }).retention.audit).toBeNull();
    await t.db.query(
      `INSERT INTO audit_events (at, actor, method, route, status) VALUES (now() - interval '401 days', 'old', 'POST', '/api/v1/x', 200), (now() - interval '399 days', 'kept', 'POST', '/api/v1/x', 200)`,
    );
    const rows = await count();
    const swept = await createRetentionSweeper(ctx).sweepOnce();
    expect(swept.auditDeleted).toBe(1);
    expect(await count()).toBe(rows - 1);
    expect((await t.db.query("SELECT actor FROM audit_events WHERE actor IN ('old', 'kept')")).rows).toEqual([{ actor: 'kept' }]);
  });
});
