import { pino } from 'pino';
import { createExampleSchema } from '../../examples/orders/handlers.js';
import { parseConfig, type ConfigInput, type TekilConfig } from '../../src/config/index.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import type { Context } from '../../src/service.js';
import type { Db, Queryable } from '../../src/store/db.js';
import type { InboxWorker } from '../../src/worker/worker.js';
import { resolveSettings } from '../../src/settings.js';
import { waitUntil } from './wait.js';
import { startTekil, type RunningTekil } from '../../src/runtime.js';
import type { HandlerRegistry } from '../../src/worker/handlers.js';

export const SOURCE = 'shop-paymos';

/** A shop source with fast retries, Paymos field mapping and the invoice state order. */
export function workerTestConfig(overrides: Partial<ConfigInput> = {}, source: Record<string, unknown> = {}): TekilConfig {
  return parseConfig({
    worker: { batch_size: 50, concurrency: 2, lease: '2s', poll_interval: '20ms' },
    sources: {
      [SOURCE]: {
        scheme: 'paymos',
        secrets: ['whsec_dGVzdC1zZWNyZXQ='],
        event_id: 'body:event_id',
        resource_id: 'body:data.id',
        event_type: 'body:event_type',
        occurred_at: 'body:occurred_at',
        retry: { max_attempts: 3, base: '5ms', cap: '20ms' },
        ordering: {
          state: 'body:data.status',
          states: ['awaiting_payment', 'confirming', 'underpaid_waiting'],
          terminal: ['paid', 'paid_over', 'underpaid', 'expired', 'cancelled'],
        },
        ...source,
      },
    },
    ...overrides,
  });
}

export function testContext(db: Db, config: TekilConfig): Context {
  return {
    config,
    settings: resolveSettings(config, {}),
    db,
    logger: pino({ level: process.env.TEKIL_TEST_LOG ?? 'silent' }),
    metrics: createMetricsRegistry(false),
  };
}

export interface InvoiceEventInput {
  eventId: string;
  invoiceId: string;
  orderId: string;
  status: string;
  amount?: number;
  currency?: string;
  occurredAt?: Date;
}

/** A Paymos-style envelope for an invoice event. */
export function invoiceEvent(input: InvoiceEventInput): { body: string; type: string; occurredAt: Date } {
  const occurredAt = input.occurredAt ?? new Date();
  const type = `invoice.${input.status}`;
  const body = JSON.stringify({
    event_id: input.eventId,
    event_type: type,
    version: 1,
    occurred_at: occurredAt.toISOString(),
    data: { id: input.invoiceId, status: input.status, order_id: input.orderId, amount: input.amount ?? 4990, currency: input.currency ?? 'TRY' },
  });
  return { body, type, occurredAt };
}

/** Records a delivery as the receiver would (the tests of processing do not need HTTP). */
export async function insertInvoiceDelivery(db: Queryable, input: InvoiceEventInput, source = SOURCE): Promise<boolean> {
  const e = invoiceEvent(input);
  const res = await db.query(
    `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
     VALUES ($1, $2, $3, $4, $5, $6, 'application/json') ON CONFLICT (source, event_id) DO NOTHING`,
    [source, input.eventId, input.invoiceId, e.type, e.occurredAt, Buffer.from(e.body)],
  );
  return res.rowCount === 1;
}

export async function createOrder(db: Queryable, id: string, amount = 4990, currency = 'TRY'): Promise<void> {
  await db.query('INSERT INTO example_orders (id, amount_minor, currency) VALUES ($1, $2, $3)', [id, amount, currency]);
}

export async function deliveryRow(db: Queryable, eventId: string, source = SOURCE) {
  const res = await db.query<{ status: string; attempts: number; last_error: string | null; result_ref: string | null; processed_at: Date | null }>(
    'SELECT status, attempts, last_error, result_ref, processed_at FROM inbox_deliveries WHERE source = $1 AND event_id = $2',
    [source, eventId],
  );
  return res.rows[0];
}

export async function ledgerCount(db: Queryable, orderId: string, kind = 'order_paid'): Promise<number> {
  const res = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM example_ledger WHERE order_id = $1 AND kind = $2', [orderId, kind]);
  return res.rows[0]!.n;
}

/**
 * Waits until a backend of this database is blocked on a lock of `lockType` (pg_stat_activity's
 * wait_event: 'advisory', 'transactionid', 'tuple', 'relation'…): the handshake that says another
 * session has reached the point where it waits, without guessing how long that takes.
 */
export async function waitForLockWait(db: Queryable, lockType: string, what: string, timeoutMs = 10_000): Promise<void> {
  await waitUntil(
    async () => {
      const res = await db.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = $1", [
        lockType,
      ]);
      return res.rowCount > 0;
    },
    timeoutMs,
    what,
  );
}

/** Runs batches until nothing is pending or processing (retries included), or the time runs out. */
export async function drain(worker: InboxWorker, db: Queryable, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const claimed = await worker.runOnce();
    if (claimed > 0) continue;
    const open = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_deliveries WHERE status IN ('pending', 'processing')");
    if (open.rows[0]!.n === 0) return;
    if (Date.now() > deadline) throw new Error(`drain: ${open.rows[0]!.n} deliveries still open after ${timeoutMs} ms`);
    // Open but not due (a retry's backoff): ask again shortly. Polling, not a barrier.
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * tekil over HTTP for end-to-end tests of the shop: the receiver, worker and api roles on the test's
 * store, on a free port, the admin token given, the example shop's tables created.
 */
export async function startShopTekil(options: {
  db: Db;
  config: TekilConfig;
  handlers: HandlerRegistry;
  adminToken: string;
  dataDir: string;
}): Promise<RunningTekil> {
  const running = await startTekil({
    config: options.config,
    roles: new Set(['receiver', 'worker', 'api'] as const),
    port: 0,
    host: '127.0.0.1',
    logger: pino({ level: 'silent' }),
    db: options.db,
    env: { TEKIL_ADMIN_TOKEN: options.adminToken, TEKIL_DATA_DIR: options.dataDir },
    handlers: options.handlers,
  });
  await createExampleSchema(options.db);
  return running;
}
