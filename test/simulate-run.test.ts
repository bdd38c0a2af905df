import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { SOURCE, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { createExampleSchema, orderHandlers } from '../examples/orders/handlers.js';
import { createShopOrders, withDecimalAmounts } from '../examples/demo/shop-adapter.js';
import { startProveEndpoints } from '../examples/orders/prove-endpoints.js';
import { defaultProveOptions, runProve, type ProveOptions } from '../src/prove/index.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { generateEndpointSecret } from '../src/outbox/secrets.js';
import { startSimulator, type Simulator } from '../src/simulate/simulator.js';
import { finalStatus, type PlannedInvoice } from '../src/simulate/lifecycle.js';
import type { SimulationSummary } from '../src/simulate/run.js';
import type { InvoiceListPage } from '../src/simulate/list-api.js';

// A few thousand invoices on Postgres (two thousand: about four thousand events, eight thousand
// deliveries with the callback URL) with every fault on. The embedded store is one connection
// per store and runs on this process's thread, beside the shop's: the same run takes several times
// longer there, so it walks fewer invoices. A 1 s provider timeout keeps the delayed and dropped
// answers' retries short.
const INVOICES = onPostgres ? 2000 : 400;
const TIMEOUT_MS = 1000;

/**
 * A provider at its worst against tekil running the example shop: every fault on at once, a thousand
 * invoices, one callback URL beside the target. Afterwards the shop's ledger, its orders and the
 * provider's list API are read back, and prove's reconcile row compares the list with the effects.
 */
describe('tekil simulate against the example shop, every fault on', () => {
  let shopDb: TestDb;
  let simDb: TestDb;
  let shop: RunningTekil;
  let sim: Simulator;
  let invoices: readonly PlannedInvoice[] = [];
  let summary: SimulationSummary;
  const secret = generateEndpointSecret();

  beforeAll(async () => {
    [shopDb, simDb] = await Promise.all([createTestDb(), createTestDb()]);
    shop = await startTekil({
      config: workerTestConfig(
        { worker: { batch_size: onPostgres ? 200 : 20, concurrency: 2, lease: '5s', poll_interval: '20ms' } },
        {
          secrets: [secret],
          // The simulator sends Paymos' own envelope: the invoice is data.invoice_id.
          resource_id: ['body:data.invoice_id'],
          retry: { max_attempts: 8, base: '20ms', cap: '200ms' },
        },
      ),
      roles: ['receiver', 'worker'],
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      db: shopDb.db,
      handlers: withDecimalAmounts(orderHandlers({ source: SOURCE }), SOURCE),
    });
    await createExampleSchema(shopDb.db);
    sim = await startSimulator({
      target: `${shop.url}/in/${SOURCE}`,
      callbackUrl: `${shop.url}/in/${SOURCE}`,
      scheme: 'paymos',
      secret,
      invoices: INVOICES,
      timeScale: 0.001,
      timeoutMs: TIMEOUT_MS,
      concurrency: onPostgres ? 64 : 32,
      faults: { drop: 0.03, delay: 0.03, duplicate: 0.05, reorder: 0.1, replay: 0.05, rotate: true },
      seed: 42,
      db: simDb.db,
      listen: { host: '127.0.0.1', port: 0 },
      apiKey: 'sk_test_list',
      logger: pino({ level: 'silent' }),
      onInvoicesCreated: async (created) => {
        invoices = created;
        await createShopOrders(shopDb.db, created);
      },
      settleTimeoutMs: 120_000,
    });
    summary = await sim.run();
    await waitUntil(
      async () =>
        Number(
          (await shopDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE status IN ('pending', 'processing')`)).rows[0]!.n,
        ) === 0,
      60_000,
      'the shop to process every delivery',
    );
  }, 120_000);

  afterAll(async () => {
    await sim?.close();
    await shop?.close();
    await Promise.all([simDb?.close(), shopDb?.close()]);
  });

  it('made every fault happen', () => {
    const target = summary.proxies.target!;
    expect(summary.invoices).toBe(INVOICES);
    expect(target.dropped).toBeGreaterThan(0);
    expect(target.delayed).toBeGreaterThan(0);
    expect(target.duplicated).toBeGreaterThan(0);
    expect(summary.reordered).toBeGreaterThan(0);
    expect(summary.replayed).toBeGreaterThan(0);
    expect(summary.rotatedSecret).toMatch(/^whsec_/);
    // Every message went to both URLs and nothing was given up on.
    expect(summary.deliveries.failed).toBeUndefined();
    expect(summary.deliveries.succeeded!.deliveries).toBe(summary.eventsPublished * 2);
    // Copies reached the shop: the sender's retries after drops and delays, duplicates, replays, the callback URL.
    expect(target.forwarded + summary.proxies.callback!.forwarded).toBeGreaterThan(summary.eventsPublished * 2);
  });

  it('the shop recorded each event once and ran each effect exactly once', async () => {
    const q = async <R>(sql: string) => (await shopDb.db.query<R>(sql)).rows;
    const [deliveries] = await q<{ n: number; dead: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'dead')::int AS dead FROM inbox_deliveries`,
    );
    expect(deliveries).toEqual({ n: summary.eventsPublished, dead: 0 });
    expect(await q(`SELECT order_id, kind, count(*)::int AS n FROM example_ledger GROUP BY 1, 2 HAVING count(*) > 1`)).toEqual([]);
    // Every invoice's final state produced its effect once, and paid ones exactly one payment.
    const ledger = await q<{ order_id: string; kind: string }>(`SELECT order_id, kind FROM example_ledger`);
    const kinds = new Map<string, Set<string>>();
    for (const row of ledger) kinds.set(row.order_id, (kinds.get(row.order_id) ?? new Set()).add(row.kind));
    const missing = invoices.filter((i) => !kinds.get(i.orderId)?.has(`order_${finalStatus(i)}`));
    expect(missing.map((i) => i.id)).toEqual([]);
  });

  it('every order ends in the state the provider last announced; late earlier events are stale', async () => {
    const { rows } = await shopDb.db.query<{ id: string; status: string }>(`SELECT id, status FROM example_orders`);
    const status = new Map(rows.map((r) => [r.id, r.status]));
    const wrong = invoices.filter((i) => status.get(i.orderId) !== finalStatus(i)).map((i) => `${i.id}: ${status.get(i.orderId)} ≠ ${finalStatus(i)}`);
    expect(wrong).toEqual([]);
    const stale = await shopDb.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE status = 'stale'`);
    expect(Number(stale.rows[0]!.n)).toBeGreaterThan(0);
    const sims = await simDb.db.query<{ id: string; status: string }>(`SELECT id, status FROM sim_invoices`);
    const simStatus = new Map(sims.rows.map((r) => [r.id, r.status]));
    expect(invoices.filter((i) => simStatus.get(i.id) !== finalStatus(i))).toEqual([]);
  });

  it('the list API returns each invoice exactly once across pages, by status and with auth', async () => {
    const get = (query: string, key = 'sk_test_list') => request(`${sim.listUrl}?${query}`, { headers: { authorization: `Bearer ${key}` } });
    const seen = new Map<string, number>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`limit=97${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = (await res.body.json()) as InvoiceListPage;
      for (const item of page.items) seen.set(item.id, (seen.get(item.id) ?? 0) + 1);
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(INVOICES / 97));
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect([...seen.keys()].sort()).toEqual(invoices.map((i) => i.id).sort());

    const paidLike = invoices.filter((i) => ['paid', 'paid_over'].includes(finalStatus(i))).length;
    let listed = 0;
    cursor = null;
    do {
      const page = (await (await get(`status=paid&status=paid_over&limit=500${cursor ? `&cursor=${cursor}` : ''}`)).body.json()) as InvoiceListPage;
      expect(page.items.every((i) => i.status === 'paid' || i.status === 'paid_over')).toBe(true);
      listed += page.items.length;
      cursor = page.next_cursor;
    } while (cursor);
    expect(listed).toBe(paidLike);

    const unauthorized = await get('limit=1', 'sk_wrong');
    expect(unauthorized.statusCode).toBe(401);
    await unauthorized.body.dump();
    const future = await (await get(`updated_since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.json();
    expect(future).toEqual({ items: [], next_cursor: null });
  });

  it("prove's reconcile row, over the provider's list, finds every invoice's effect once in its last state — and fails on one effect too many", async () => {
    const effects = await startProveEndpoints({ db: shopDb.db });
    try {
      const options: ProveOptions = {
        ...defaultProveOptions,
        url: `${shop.url}/in/${SOURCE}`,
        scheme: 'paymos',
        secret,
        effectsUrl: `${effects.url}/_prove/effects`,
        settleMs: 0,
        // The shop counts its orders' effects, so the list's items are matched by their order_id.
        providerList: { url: sim.listUrl!, apiKey: 'sk_test_list', resourceField: 'order_id' },
      };
      const reconcileRow = async () => (await runProve(options, { only: ['reconcile'] })).rows.find((r) => r.id === 'reconcile')!;
      expect(await reconcileRow()).toMatchObject({ status: 'passed', figures: { resources: INVOICES, listed: INVOICES, differing: 0 } });

      const victim = invoices[0]!;
      await shopDb.db.query(
        `INSERT INTO example_ledger (order_id, event_id, kind) SELECT id, 'evt_twice', 'order_' || status FROM example_orders WHERE id = $1`,
        [victim.orderId],
      );
      const row = await reconcileRow();
      expect(row.status).toBe('failed');
      expect(row.message).toContain(`${victim.orderId} (provider list) ran 2 times`);
      await shopDb.db.query(`DELETE FROM example_ledger WHERE event_id = 'evt_twice'`);
    } finally {
      await effects.close();
    }
  });
});
