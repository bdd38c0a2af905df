import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshInheritedSettings } from '../src/outbox/inherited-settings.js';
import { EVERY_TENANT } from '../src/scope.js';
import { createTenant, updateTenantSettings } from '../src/tenants/tenants.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';

/**
 * `sending.event_id`: the file's default event-id mode ("iki uç nokta … iki farklı kimlik görür").
 * The order is the endpoint's own value, then its tenant's, then the file's.
 */
describe('sending.event_id: the sending-wide default of per-delivery event ids', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('gives endpoints without a value of their own and without a tenant default the file default, and yields to the tenant and the endpoint', async () => {
    const h = outboxHarness(t.db, { event_id: 'delivery' });
    expect(h.sending.event_id).toBe('delivery');
    const plain = (await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/plain' })).endpoint;
    expect(plain.event_id).toBe('delivery');
    expect(plain.own_settings).toEqual([]);
    const own = (await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/own', event_id: 'message' })).endpoint;
    expect(own.event_id).toBe('message');

    await createTenant(t.db, { id: 'm_message', event_id: 'message' });
    await createTenant(t.db, { id: 'm_none' });
    const ofTenant = (await h.endpoints.create(t.db, { tenant_id: 'm_message', url: 'http://127.0.0.1:9/t' })).endpoint;
    expect(ofTenant.event_id).toBe('message');
    const ofPlainTenant = (await h.endpoints.create(t.db, { tenant_id: 'm_none', url: 'http://127.0.0.1:9/n' })).endpoint;
    expect(ofPlainTenant.event_id).toBe('delivery');

    // The tenant's default cleared: the file's applies again.
    await updateTenantSettings(t.db, 'm_message', { event_id: null }, h.sending);
    expect((await h.endpoints.get(t.db, EVERY_TENANT, ofTenant.id)).event_id).toBe('delivery');

    // A file changed back to `message` reaches the endpoints that inherit it when a dispatcher starts.
    const before = outboxHarness(t.db, {});
    expect(before.sending.event_id).toBe('message');
    await refreshInheritedSettings(t.db, before.sending, null);
    expect((await h.endpoints.get(t.db, EVERY_TENANT, plain.id)).event_id).toBe('message');
    expect((await h.endpoints.get(t.db, EVERY_TENANT, ofPlainTenant.id)).event_id).toBe('message');
  });

  it('refuses an unknown mode in the file', () => {
    expect(() => outboxHarness(t.db, { event_id: 'resource' })).toThrow();
  });
});
