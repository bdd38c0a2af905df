import { defineStatement, type NoParams } from '../statement.js';

// The simulator's table, sim_invoices, is created by migration 008_simulator.sql.

export const insertInvoices = defineStatement<
  {
    ids: string[];
    orderIds: Array<string | null>;
    statuses: string[];
    amounts: string[];
    paidAmounts: string[];
    currencies: string[];
    updatedAt: Date[];
  },
  never
>(
  'sim_insert_invoices',
  `
INSERT INTO sim_invoices (id, order_id, status, amount, paid_amount, currency, updated_at)
SELECT * FROM unnest($ids::text[], $orderIds::text[], $statuses::text[], $amounts::text[], $paidAmounts::text[], $currencies::text[], $updatedAt::timestamptz[])`,
);

/**
 * Status changes; run in the transaction that publishes their events, so the two cannot part. An
 * event published late about an earlier moment (the reordering fault) leaves the later state alone.
 */
export const updateInvoiceStatuses = defineStatement<{ ids: string[]; statuses: string[]; paidAmounts: string[]; at: Date[] }, never>(
  'sim_update_invoice_statuses',
  `
UPDATE sim_invoices AS i SET status = c.status, paid_amount = c.paid_amount, updated_at = c.at
  FROM unnest($ids::text[], $statuses::text[], $paidAmounts::text[], $at::timestamptz[]) AS c (id, status, paid_amount, at)
 WHERE i.id = c.id AND i.updated_at <= c.at`,
);

/**
 * One page of the list API, keyed on the invoice id: an invoice that changes while a client pages
 * keeps its place, so every invoice comes back exactly once across the pages.
 */
export const listInvoicesPage = defineStatement<
  { statuses: string[] | null; after: string | null; since: Date | null; until: Date | null; limit: number },
  { id: string; status: string; amount: string; paid_amount: string; currency: string; updated_at: Date; order_id: string | null }
>(
  'sim_list_invoices',
  `SELECT id, status, amount, paid_amount, currency, updated_at, order_id
     FROM sim_invoices
    WHERE ($statuses::text[] IS NULL OR status = ANY($statuses::text[]))
      AND ($after::text IS NULL OR id > $after::text)
      AND ($since::timestamptz IS NULL OR updated_at >= $since::timestamptz)
      AND ($until::timestamptz IS NULL OR updated_at < $until::timestamptz)
    ORDER BY id
    LIMIT $limit::int`,
);

/** Deliveries of this simulator's messages by status, and how many HTTP attempts they took. */
export const outboxSummary = defineStatement<NoParams, { status: string; deliveries: number; attempts: number }>(
  'sim_outbox_summary',
  `
SELECT d.status, count(*)::int AS deliveries, coalesce(sum(d.attempts), 0)::int AS attempts
  FROM outbox_deliveries d
 GROUP BY d.status`,
);

/** Deliveries still in flight: the run is over when none is left. */
export const unsettledDeliveries = defineStatement<NoParams, { n: number }>(
  'sim_unsettled_deliveries',
  'SELECT count(*)::int AS n FROM outbox_queue WHERE NOT failed',
);

/** Messages already delivered, oldest first: the pool manual replays are drawn from. */
export const succeededMessages = defineStatement<NoParams, { id: string }>(
  'sim_succeeded_messages',
  `SELECT DISTINCT message_id AS id FROM outbox_deliveries WHERE status = 'succeeded' ORDER BY message_id`,
);

/** How far the run is: deliveries in all, and those delivered already. */
export const deliveryProgress = defineStatement<NoParams, { total: number; succeeded: number }>(
  'sim_delivery_progress',
  `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded FROM outbox_deliveries`,
);
