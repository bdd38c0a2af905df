import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineHandlers, PermanentError, type HandlerRegistry } from '../../src/worker/handlers.js';
import type { Queryable } from '../../src/store/db.js';
import { applyStandaloneInvoice } from './invoices.js';
import type { ProveControl } from './prove-endpoints.js';

/** The invoice of an order the shop created (`order_id`), with the amount in minor units. */
const orderInvoice = z.object({
  id: z.string(),
  status: z.string(),
  order_id: z.string(),
  amount: z.number().int().nonnegative(),
  currency: z.string().length(3),
});

/**
 * An invoice as Paymos sends it on its own (`invoice_id`, amounts as decimal text), e.g. a top-up
 * with no order behind it: the shop keeps it in `example_invoices`. This is what `tekil prove` sends.
 */
const standaloneInvoice = z.object({
  invoice_id: z.string(),
  status: z.string(),
  amount: z.string(),
  currency: z.string().length(3),
});

/** A Paymos-style invoice event: `{event_id, event_type, occurred_at, data: {...}}`. */
const invoiceEvent = z.object({
  event_id: z.string(),
  event_type: z.string(),
  occurred_at: z.string().optional(),
  data: z.union([orderInvoice, standaloneInvoice]),
});
export type InvoiceEvent = z.infer<typeof invoiceEvent>;

/** The call to an outside service (e.g. the warehouse) made after the order is marked paid. */
export type AfterPaid = (call: { orderId: string; idempotencyKey: string }) => Promise<void>;

export interface OrderHandlersOptions {
  /** The source, or several (e.g. the main URL and the callback URL of one provider account). */
  source: string | readonly string[];
  afterPaid?: AfterPaid;
  /**
   * Called inside the handler's transaction when a standalone invoice's payment credited the customer,
   * e.g. to publish an outbox message in that same transaction (see tekil-handlers.ts).
   */
  onCredited?: (call: { tx: Queryable; invoiceId: string; eventId: string }) => Promise<void>;
  /** The prove control switches (`fail-next`, `slow-next`); staging only. */
  control?: ProveControl;
}

export async function createExampleSchema(db: Queryable): Promise<void> {
  await db.exec(await readFile(new URL('./schema.sql', import.meta.url), 'utf8'));
}

interface OrderRow {
  id: string;
  amount_minor: number | string;
  currency: string;
  status: string;
}

type OrderInvoice = z.infer<typeof orderInvoice>;

async function loadOrder(tx: Queryable, invoice: OrderInvoice): Promise<OrderRow> {
  const res = await tx.query<OrderRow>('SELECT id, amount_minor, currency, status FROM example_orders WHERE id = $1 FOR UPDATE', [invoice.order_id]);
  const order = res.rows[0];
  // Wrong data is not fixed by retrying: permanent, so it lands in the review queue at once.
  if (!order) throw new PermanentError(`invoice ${invoice.id} names unknown order ${invoice.order_id}`);
  if (Number(order.amount_minor) !== invoice.amount || order.currency !== invoice.currency) {
    throw new PermanentError(
      `invoice ${invoice.id} is for ${invoice.amount} ${invoice.currency}, order ${order.id} is ${order.amount_minor} ${order.currency}`,
    );
  }
  return order;
}

/**
 * The shop's handlers. `invoice.paid` marks the order paid only if it is not paid yet (a conditional
 * update: the second lock behind tekil's own), writes one ledger row for the effect, then calls the
 * outside service with the idempotency key. Everything goes through `ctx.tx`, so a failing outside
 * call rolls the update and the ledger row back and the retry starts clean.
 */
export function orderHandlers(options: OrderHandlersOptions): HandlerRegistry {
  const registry = defineHandlers();
  for (const source of typeof options.source === 'string' ? [options.source] : options.source) {
    registry
      .on<InvoiceEvent>(
        source,
        'invoice.paid',
        async (event, ctx) => {
          const invoice = event.payload.data;
          if (!('order_id' in invoice)) {
            const credited = await applyStandaloneInvoice(ctx.tx, invoice.invoice_id, 'paid', event.eventId, options.control);
            if (credited) await options.onCredited?.({ tx: ctx.tx, invoiceId: invoice.invoice_id, eventId: event.eventId });
            return { resultRef: invoice.invoice_id };
          }
          const order = await loadOrder(ctx.tx, invoice);
          const updated = await ctx.tx.query(
            `UPDATE example_orders SET status = 'paid', paid_at = now(), paid_by_event = $2
             WHERE id = $1 AND status <> 'paid'`,
            [order.id, event.eventId],
          );
          if (updated.rowCount === 1) {
            await ctx.tx.query('INSERT INTO example_ledger (order_id, event_id, kind) VALUES ($1, $2, $3)', [order.id, event.eventId, 'order_paid']);
            await options.afterPaid?.({ orderId: order.id, idempotencyKey: ctx.idempotencyKey });
          }
          return { resultRef: order.id };
        },
        { schema: invoiceEvent },
      )
      .on<InvoiceEvent>(
        source,
        '*',
        async (event, ctx) => {
          // Intermediate states (confirming, underpaid_waiting…) move an unpaid order forward only.
          const invoice = event.payload.data;
          if (!('order_id' in invoice)) {
            await applyStandaloneInvoice(ctx.tx, invoice.invoice_id, invoice.status, event.eventId, options.control);
            return { resultRef: invoice.invoice_id };
          }
          const order = await loadOrder(ctx.tx, invoice);
          const updated = await ctx.tx.query(`UPDATE example_orders SET status = $2 WHERE id = $1 AND status <> 'paid'`, [order.id, invoice.status]);
          if (updated.rowCount === 1) {
            await ctx.tx.query('INSERT INTO example_ledger (order_id, event_id, kind) VALUES ($1, $2, $3)', [
              order.id,
              event.eventId,
              `order_${invoice.status}`,
            ]);
          }
          return { resultRef: order.id };
        },
        { schema: invoiceEvent },
      );
  }
  return registry;
}
