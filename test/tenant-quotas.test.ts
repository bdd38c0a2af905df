import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import type { Context } from '../src/service.js';
import { resolveSettings } from '../src/settings.js';
import { createTestDb, type TestDb } from './helpers/db.js';

const ADMIN = 'tenant-quotas-admin';

/**
 * Quotas per tenant (docs/tenants.md#quotas): a merchant's own token made 1,000 endpoints in 6.4 s. Past
 * its quota of endpoints, tokens or live secrets per endpoint a tenant gets 409 QUOTA_EXCEEDED, also when
 * the requests race; an operator sets a tenant's own quota; the provider's own calls are not bound.
 */
describe('tenant quotas', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let merchant = '';

  const call = async (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload: payload as object } : {}),
    });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
  const endpoint = (token: string, tenant?: string) =>
    call(token, 'POST', '/endpoints', { url: 'http://127.0.0.1:9/hook', ...(tenant ? { tenant_id: tenant } : {}) });

  beforeAll(async () => {
    t = await createTestDb();
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-tenant-quotas-')) },
      sending: { allow_networks: ['127.0.0.0/8'] },
      tenants: { allow_networks: ['127.0.0.0/8'], quotas: { endpoints: 3, tokens: 3, secrets: 2 } },
    });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
    for (const id of ['m_a', 'm_race']) expect((await call(ADMIN, 'POST', '/tenants', { id })).status).toBe(201);
    merchant = (await call(ADMIN, 'POST', '/tenants/m_a/tokens', { role: 'operator' })).body.token as string;
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it("a tenant's own endpoints stop at its quota with 409 QUOTA_EXCEEDED; deleting one makes room; the provider is not bound", async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await endpoint(merchant);
      expect(res.status).toBe(201);
      made.push(res.body.id as string);
    }
    const refused = await endpoint(merchant);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'QUOTA_EXCEEDED' });
    expect(refused.body.message).toMatch(/endpoints: 3/);
    expect((await call(merchant, 'DELETE', `/endpoints/${made[0]}`)).status).toBe(200);
    expect((await endpoint(merchant)).status).toBe(201);
    // The provider's own call (the admin token) for the tenant.
    expect((await endpoint(ADMIN, 'm_a')).status).toBe(201);
    const shown = await call(ADMIN, 'GET', '/tenants/m_a/quotas');
    expect(shown.body).toMatchObject({ quotas: { endpoints: 3, tokens: 3, secrets: 2 }, own: {}, held: { endpoints: 4, tokens: 1 } });
  });

  it('racing requests cannot pass the quota together', async () => {
    const token = (await call(ADMIN, 'POST', '/tenants/m_race/tokens', { role: 'operator' })).body.token as string;
    const results = await Promise.all(Array.from({ length: 8 }, () => endpoint(token)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
  });

  it('an operator sets one tenant its own quota, and clears it back to the default', async () => {
    expect((await call(ADMIN, 'PATCH', '/tenants/m_a/quotas', { endpoints: 5 })).body).toMatchObject({ quotas: { endpoints: 5 }, own: { endpoints: 5 } });
    expect((await endpoint(merchant)).status).toBe(201);
    expect((await call(ADMIN, 'PATCH', '/tenants/m_a/quotas', { endpoints: null })).body).toMatchObject({ quotas: { endpoints: 3 }, own: {} });
    expect((await endpoint(merchant)).status).toBe(409);
    expect((await call(merchant, 'PATCH', '/tenants/m_a/quotas', { endpoints: 100 })).status).toBe(404);
    expect((await call(ADMIN, 'PATCH', '/tenants/m_a/quotas', { endpoints: -1 })).status).toBe(400);
  });

  it('tokens stop at the quota; live secrets per endpoint stop at the quota', async () => {
    expect((await call(ADMIN, 'POST', '/tenants/m_a/tokens', { role: 'viewer' })).status).toBe(201);
    expect((await call(ADMIN, 'POST', '/tenants/m_a/tokens', { role: 'viewer' })).status).toBe(201);
    const refused = await call(ADMIN, 'POST', '/tenants/m_a/tokens', { role: 'viewer' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'QUOTA_EXCEEDED' });
    const list = await call(merchant, 'GET', '/endpoints');
    const id = (list.body.items as Array<{ id: string }>)[0]!.id;
    // One secret; a rotation keeps it for its window beside the new one: two, the quota.
    expect((await call(merchant, 'POST', `/endpoints/${id}/rotate-secret`, { window: '1h' })).status).toBe(200);
    const third = await call(merchant, 'POST', `/endpoints/${id}/rotate-secret`, { window: '1h' });
    expect(third.status).toBe(409);
    expect(third.body.message).toMatch(/secrets: 2/);
    // The secrets already inside their windows still sign: no room, whatever the new window.
    expect((await call(merchant, 'POST', `/endpoints/${id}/rotate-secret`, { window: '0s' })).status).toBe(409);
  });
});
