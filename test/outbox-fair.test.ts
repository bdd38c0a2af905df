import { EVERY_TENANT } from '../src/scope.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { publish } from '../src/outbox/publish.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';
import { startSlowServer, type SlowServer } from './helpers/slow-server.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Fair sending (docs/sending.md, "Fairness"), with real receivers that answer slowly: a tenant whose
 * endpoints hold requests open does not delay another tenant's delivery; a tenant's cap on requests in
 * flight holds across two dispatchers; the slow lane takes an endpoint whose answers turn slow and
 * releases it when they are fast again.
 */
describe('fair sending', () => {
  let t: TestDb;
  let server: SlowServer;
  const dispatchers: Dispatcher[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    server = await startSlowServer();
  });
  // A test that failed leaves no dispatcher running into the next (it would serve the next one's endpoints).
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  });
  afterAll(async () => {
    await Promise.all(dispatchers.map((d) => d.stop()));
    await server?.close();
    await t?.close();
  });

  const publishMany = async (tenantId: string, type: string, count: number) => {
    for (let done = 0; done < count; done += 100) {
      await t.db.transaction(async (tx) => {
        for (let i = done; i < Math.min(count, done + 100); i++) await publish(tx, { tenantId, type, data: { i } });
      });
    }
  };

  it("a quiet tenant's delivery is not delayed by another tenant's endpoints that hold every request for seconds", async () => {
    // Six endpoints that answer in 4 s, 16 requests each in flight: 96 requests held, more than the 64
    // request slots a dispatcher had, so the quiet tenant's delivery used to wait for a slow answer.
    server.setDelay('/noisy', 4_000);
    const h = outboxHarness(t.db);
    await t.db.query("INSERT INTO tenants (id, name) VALUES ('noisy', 'noisy'), ('quiet', 'quiet')");
    for (let i = 0; i < 6; i++) await h.endpoints.create(t.db, { url: `${server.url}/noisy/${i}`, tenant_id: 'noisy', event_types: ['n.x'], timeout: '20s' });
    await h.endpoints.create(t.db, { url: `${server.url}/quiet`, tenant_id: 'quiet', event_types: ['q.x'] });
    await publishMany('noisy', 'n.x', 100);
    const d = h.newDispatcher();
    dispatchers.push(d);
    await d.start();
    await waitUntil(async () => server.open('/noisy') >= 60, 30_000, 'the slow endpoints hold their requests');
    const publishedAt = Date.now();
    await publishMany('quiet', 'q.x', 1);
    await waitUntil(async () => server.arrivals('/quiet').length === 1, 30_000, 'the quiet delivery arrives');
    const latency = server.arrivals('/quiet')[0]! - publishedAt;
    // Well before the slow endpoints' first answer (4 s): the quiet delivery waited for none of them.
    expect(latency).toBeLessThan(2_000);
    expect(server.open('/noisy')).toBeGreaterThanOrEqual(60);
    await d.stop();
    dispatchers.pop();
  }, 120_000);

  it("holds a tenant's cap on requests in flight across two dispatchers, while another tenant is served", async () => {
    server.setDelay('/capped', 300);
    server.setDelay('/other', 300);
    const h = outboxHarness(t.db, { tenant_max_in_flight: 100 });
    await t.db.query("INSERT INTO tenants (id, name, max_in_flight) VALUES ('capped', 'capped', 5), ('other', 'other', NULL)");
    for (let i = 0; i < 2; i++) await h.endpoints.create(t.db, { url: `${server.url}/capped/${i}`, tenant_id: 'capped', event_types: ['c.x'] });
    await h.endpoints.create(t.db, { url: `${server.url}/other`, tenant_id: 'other', event_types: ['o.x'] });
    await publishMany('capped', 'c.x', 40);
    await publishMany('other', 'o.x', 40);
    const sent = async (tenant: string) =>
      (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_deliveries WHERE tenant_id = $1 AND status = 'succeeded'`, [tenant])).rows[0]!.n;
    // Two dispatchers, each with its own pool: the cap is counted in the database. The second starts
    // while the first holds the capped tenant's requests, then the first stops, so both send the capped
    // tenant's deliveries (which of two running dispatchers wins a freed slot is a race on a loaded machine).
    const first = h.newDispatcher();
    const second = h.newDispatcher();
    dispatchers.push(first, second);
    await first.start();
    await waitUntil(async () => server.open('/capped') >= 3, 30_000, "the first dispatcher sends the capped tenant's");
    await second.start();
    await waitUntil(async () => (await sent('capped')) >= 10, 60_000, 'ten of the capped tenant sent');
    await first.stop();
    await waitUntil(async () => (await sent('capped')) === 80 && (await sent('other')) === 40, 90_000, 'every delivery sent');
    expect(server.mostOpen('/capped')).toBeLessThanOrEqual(5);
    expect(server.mostOpen('/capped')).toBeGreaterThanOrEqual(3);
    // The other tenant was not held to the capped one's cap (its endpoint's own cap is 16).
    expect(server.mostOpen('/other')).toBeGreaterThan(5);
    const { rows } = await t.db.query<{ n: number }>("SELECT count(DISTINCT dispatcher)::int AS n FROM outbox_attempts WHERE tenant_id = 'capped'");
    expect(rows[0]!.n).toBe(2);
    // Every request finished: nothing left counted in flight.
    const flight = await t.db.query<{ n: string }>(
      "SELECT (t.requests_claimed - coalesce(o.requests_done, 0))::text AS n FROM tenants t LEFT JOIN outbox_tenant_done o ON o.tenant_id = t.id WHERE t.id = 'capped'",
    );
    expect(flight.rows[0]!.n).toBe('0');
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  }, 120_000);

  it('the slow lane takes an endpoint whose answers turn slow, bounds its requests, and releases it when they are fast again', async () => {
    server.setDelay('/lane', 600);
    const h = outboxHarness(t.db, { slow_lane: { threshold: '300ms', max_in_flight: 2 } });
    await t.db.query("INSERT INTO tenants (id, name) VALUES ('lane', 'lane')");
    const { endpoint } = await h.endpoints.create(t.db, { url: `${server.url}/lane`, tenant_id: 'lane', event_types: ['l.x'], max_in_flight: 16 });
    const slowP90 = async () => (await t.db.query<{ p: number | null }>('SELECT slow_p90_ms AS p FROM endpoints WHERE id = $1', [endpoint.id])).rows[0]!.p;
    const d = h.newDispatcher();
    dispatchers.push(d);
    await d.start();
    await publishMany('lane', 'l.x', 30);
    await waitUntil(async () => (await slowP90()) !== null, 60_000, 'the endpoint enters the slow lane');
    expect(await slowP90()).toBeGreaterThanOrEqual(300);
    // What the API shows of it (the panel and the portal: "slow: p90 …").
    expect((await h.endpoints.get(t.db, EVERY_TENANT, endpoint.id)).slow?.p90_ms).toBeGreaterThanOrEqual(300);
    // From now on the lane holds at most 2 of its requests. Deliveries claimed before the endpoint was
    // judged went out in the fast lane; wait for every one of them to finish (counting open connections
    // is not enough: a claimed request may not have opened its connection yet).
    const succeeded = async () =>
      (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_deliveries WHERE tenant_id = 'lane' AND status = 'succeeded'")).rows[0]!.n;
    await waitUntil(async () => (await succeeded()) === 30 && server.open('/lane') === 0, 60_000, 'the requests started in the fast lane finish');
    server.resetMost('/lane');
    await publishMany('lane', 'l.x', 10);
    await waitUntil(async () => d.slowInFlightCount > 0, 30_000, 'requests go through the slow lane');
    await new Promise((r) => setTimeout(r, 1_500));
    expect(server.mostOpen('/lane')).toBeLessThanOrEqual(2);
    // Fast again: the lane lets the endpoint go once its recent answers are fast.
    server.setDelay('/lane', 0);
    await publishMany('lane', 'l.x', 40);
    await waitUntil(async () => (await slowP90()) === null, 60_000, 'the endpoint leaves the slow lane');
    expect((await h.endpoints.get(t.db, EVERY_TENANT, endpoint.id)).slow).toBeNull();
  }, 180_000);
});
