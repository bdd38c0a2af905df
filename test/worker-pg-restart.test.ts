import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from './helpers/db.js';
import { privatePostgresUnavailable, startPrivatePostgres, type PrivatePostgres } from './helpers/private-postgres.js';
import { createOrder, insertInvoiceDelivery, SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { freePort } from './helpers/free-port.js';
import { createExampleSchema, orderHandlers } from '../examples/orders/handlers.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import type { Db } from '../src/store/db.js';
import { createInboxWorker } from '../src/worker/worker.js';

const unavailable = onPostgres ? privatePostgresUnavailable() : undefined;
// In CI the proof must run: a private cluster that cannot be made fails there instead of skipping.
const skipped = !onPostgres || (unavailable !== undefined && !process.env.CI);
if (onPostgres && skipped) console.warn(`[tekil] skipping the Postgres restart test: ${unavailable}`);

/** Postgres restarted while deliveries are in flight → all eventually done, none twice. */
describe.skipIf(skipped)('worker across a Postgres restart', () => {
  let pgServer: PrivatePostgres;
  let db: Db;

  beforeAll(async () => {
    if (unavailable) throw new Error(`the Postgres restart test must run in CI, but no private cluster can be made here: ${unavailable}`);
    pgServer = startPrivatePostgres(await freePort());
  });
  afterAll(async () => {
    await db?.close().catch(() => {});
    pgServer?.destroy();
  });

  it('every delivery ends done with exactly one effect', async () => {
    db = createPostgresDb({ connectionString: pgServer.url, max: 6 });
    await migrate(db);
    await createExampleSchema(db);
    const n = 300;
    for (let i = 0; i < n; i++) {
      await createOrder(db, `ord_${i}`);
      await insertInvoiceDelivery(db, { eventId: `evt_${i}`, invoiceId: `inv_${i}`, orderId: `ord_${i}`, status: 'paid' });
    }
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 2, lease: '1s', poll_interval: '20ms' } });
    // Enough attempts that the outage cannot exhaust them.
    config.sources[SOURCE]!.retry = { max_attempts: 50, base: 10, cap: 200 };
    // A little work per delivery (not a barrier), so batches are in flight when the server stops.
    const handlers = orderHandlers({ source: SOURCE, afterPaid: () => new Promise((r) => setTimeout(r, 2)) });
    const ctx = testContext(db, config);
    const worker = createInboxWorker(ctx, { handlers });
    await worker.start();

    const count = async (status: string) =>
      Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbox_deliveries WHERE status = $1', [status])).rows[0]!.n);
    await waitUntil(async () => (await count('done')) >= n / 5, 20_000, 'processing to start');
    pgServer.stop(); // in-flight batches lose their connections mid-transaction
    // The outage lasts until the workers have noticed it (a failed batch), however long that takes.
    const batchErrorsSoFar = async () => (await ctx.metrics.getSingleMetric('tekil_worker_batch_errors_total')!.get()).values[0]?.value ?? 0;
    await waitUntil(async () => (await batchErrorsSoFar()) > 0, 20_000, 'a batch to fail on the stopped server');
    pgServer.start();

    await waitUntil(async () => (await count('done').catch(() => 0)) === n, 40_000, `all ${n} deliveries to be done`);
    await worker.stop();

    // The outage really hit work in flight: batches failed and leases had to be taken back.
    const batchErrors = await ctx.metrics.getSingleMetric('tekil_worker_batch_errors_total')!.get();
    expect(batchErrors.values[0]!.value).toBeGreaterThan(0);

    const effects = await db.query<{ order_id: string; n: number }>(
      "SELECT order_id, count(*)::int AS n FROM example_ledger WHERE kind = 'order_paid' GROUP BY order_id HAVING count(*) <> 1",
    );
    expect(effects.rows).toEqual([]);
    const paid = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM example_orders WHERE status = 'paid'");
    expect(paid.rows[0]!.n).toBe(n);
    const ledger = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM example_ledger WHERE kind = 'order_paid'");
    expect(ledger.rows[0]!.n).toBe(n);
  }, 60_000);
});
