import { defineStatement } from '../statement.js';

// The simulator's table, sim_invoices, is created by migration 008_simulator.sql.

export const INSERT_INVOICES = `
INSERT INTO sim_invoices (id, order_id, status, amount, paid_amount, currency, updated_at)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])`;

/**
 * Status changes; run in the transaction that publishes their events, so the two cannot part. An
 * event published late about an earlier moment (the reordering fault) leaves the later state alone.
 */
export const UPDATE_INVOICE_STATUSES = `
UPDATE sim_invoices AS i SET status = c.status, paid_amount = c.paid_amount, updated_at = c.at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) AS c (id, status, paid_amount, at)
 WHERE i.id = c.id AND i.updated_at <= c.at`;

/**
 * One page of the list API, keyed on the invoice id: an invoice that changes while a client pages
 * keeps its place, so every invoice comes back exactly once across the pages.
 */
export const listInvoicesPage = defineStatement<{ statuses: string[] | null; after: string | null; since: Date | null; until: Date | null; limit: number }>(
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

export const COUNT_INVOICES_BY_STATUS = `SELECT status, count(*)::int AS n FROM sim_invoices GROUP BY status ORDER BY status`;

/** Deliveries of this simulator's messages by status, and how many HTTP attempts they took. */
export const OUTBOX_SUMMARY = `
SELECT d.status, count(*)::int AS deliveries, coalesce(sum(d.attempts), 0)::int AS attempts
  FROM outbox_deliveries d
 GROUP BY d.status`;

/** Deliveries still in flight: the run is over when none is left. */
export const UNSETTLED_DELIVERIES = 'SELECT count(*)::int AS n FROM outbox_queue WHERE NOT failed';

/** Messages already delivered, oldest first: the pool manual replays are drawn from. */
export const SUCCEEDED_MESSAGES = `SELECT DISTINCT message_id AS id FROM outbox_deliveries WHERE status = 'succeeded' ORDER BY message_id`;

/** How far the run is: deliveries in all, and those delivered already. */
export const DELIVERY_PROGRESS = `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded FROM outbox_deliveries`;
