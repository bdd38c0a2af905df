import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { OpenApiDocument } from '../src/api/openapi.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { SOURCE, insertInvoiceDelivery, testContext, workerTestConfig } from './helpers/inbox.js';

const ADMIN = 'api-roles-admin-token';

interface Operation {
  method: string;
  path: string;
  permission: string;
}

/** Fills `{param}` with a value: the role check runs before a route looks at its input. */
const concrete = (path: string): string => path.replace(/\{[^}]+\}/g, 'x');

describe('operator tokens and roles on every admin route', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let operations: Operation[];
  const tokens = { viewer: '', operator: '' };

  const call = (token: string, method: string, url: string, payload?: unknown) =>
    app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  beforeAll(async () => {
    t = await createTestDb();
    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-api-roles-')) } });
    app = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken: ADMIN });
    for (const role of ['viewer', 'operator'] as const) {
      const res = await call(ADMIN, 'POST', '/api/v1/operators', { name: `${role}-1`, role });
      expect(res.statusCode, res.body).toBe(201);
      tokens[role] = (res.json() as { token: string }).token;
      expect(tokens[role]).toMatch(/^tko_/);
    }
    const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as OpenApiDocument;
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, permission: op['x-tekil-permission'] })),
    );
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('every route that changes something needs more than view (signing out ends only your own session; a dry run reads)', () => {
    const reads = new Set(['DELETE /api/v1/session', 'POST /api/v1/jobs/dry-run']);
    const changing = operations.filter((o) => o.method !== 'GET' && !reads.has(`${o.method} ${o.path}`) && o.permission !== 'public');
    expect(changing.length).toBeGreaterThanOrEqual(15);
    for (const o of changing) expect(o.permission, `${o.method} ${o.path}`).not.toBe('view');
  });

  it('a viewer is refused with FORBIDDEN on every operate and admin route', async () => {
    const guarded = operations.filter((o) => o.permission === 'operate' || o.permission === 'admin');
    for (const o of guarded) {
      const res = await call(tokens.viewer, o.method, concrete(o.path), {});
      expect(res.statusCode, `${o.method} ${o.path}: ${res.body}`).toBe(403);
      expect((res.json() as { error: string }).error).toBe('FORBIDDEN');
    }
  });

  it('an operator is refused on every admin route and may read', async () => {
    for (const o of operations.filter((x) => x.permission === 'admin')) {
      const res = await call(tokens.operator, o.method, concrete(o.path), {});
      expect(res.statusCode, `${o.method} ${o.path}`).toBe(403);
    }
    for (const token of [tokens.viewer, tokens.operator]) {
      const res = await call(token, 'GET', '/api/v1/inbox');
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it("a viewer's replay changes nothing in the store; an operator's replays", async () => {
    await insertInvoiceDelivery(t.db, { eventId: 'evt_roles_1', invoiceId: 'inv_r1', orderId: 'ord_r1', status: 'paid' });
    await t.db.query(`UPDATE inbox_deliveries SET status = 'dead' WHERE source = $1 AND event_id = 'evt_roles_1'`, [SOURCE]);
    const status = async () =>
      (await t.db.query<{ status: string }>(`SELECT status FROM inbox_deliveries WHERE source = $1 AND event_id = 'evt_roles_1'`, [SOURCE])).rows[0]?.status;

    expect((await call(tokens.viewer, 'POST', `/api/v1/inbox/${SOURCE}/evt_roles_1/replay`)).statusCode).toBe(403);
    expect(await status()).toBe('dead');
    const res = await call(tokens.operator, 'POST', `/api/v1/inbox/${SOURCE}/evt_roles_1/replay`);
    expect(res.statusCode, res.body).toBe(200);
    expect(await status()).toBe('pending');
  });

  it('a revoked token is refused at once, and its name can be given to a new operator', async () => {
    const made = await call(ADMIN, 'POST', '/api/v1/operators', { name: 'temp', role: 'operator' });
    const { token, id } = made.json() as { token: string; id: string };
    expect((await call(token, 'GET', '/api/v1/endpoints')).statusCode).toBe(200);
    expect((await call(ADMIN, 'POST', '/api/v1/operators', { name: 'temp', role: 'viewer' })).statusCode).toBe(409);

    const revoked = await call(ADMIN, 'POST', '/api/v1/operators/temp/revoke');
    expect(revoked.statusCode, revoked.body).toBe(200);
    const refused = await call(token, 'GET', '/api/v1/endpoints');
    expect(refused.statusCode).toBe(401);
    expect((refused.json() as { error: string }).error).toBe('UNAUTHORIZED');

    const row = await t.db.query<{ revoked: boolean }>('SELECT revoked_at IS NOT NULL AS revoked FROM operators WHERE id = $1', [id]);
    expect(row.rows[0]?.revoked).toBe(true);
    expect((await call(ADMIN, 'POST', '/api/v1/operators', { name: 'temp', role: 'viewer' })).statusCode).toBe(201);
    const listed = (await call(ADMIN, 'GET', '/api/v1/operators')).json() as { items: Array<{ name: string; role: string }> };
    expect(listed.items.filter((o) => o.name === 'temp')).toEqual([expect.objectContaining({ role: 'viewer' })]);
  });

  it('only a hash of a token is stored', async () => {
    const { rows } = await t.db.query<{ token_hash: string }>('SELECT token_hash FROM operators');
    for (const r of rows) expect(r.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.map((r) => r.token_hash)).not.toContain(tokens.viewer);
  });
});
