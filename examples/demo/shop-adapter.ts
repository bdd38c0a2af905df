import type { Queryable } from '../../src/store/db.js';
import { HandlerRegistry, type PayloadSchema } from '../../src/worker/handlers.js';
import { invoiceEventType, invoiceStatuses } from '../../src/provider/invoice-events.js';
import type { PlannedInvoice } from '../../src/simulate/lifecycle.js';

/**
 * The example shop (examples/orders) reads an order's invoice as `data.id` with the amount in whole
 * minor units; a provider sends its natural envelope, `data.invoice_id` with decimal text ("49.90"),
 * as `tekil simulate` does. This wraps the shop's handlers so each payload is read in the shop's terms
 * before the shop's own schema checks it; nothing else about the handlers changes.
 */
export function withDecimalAmounts(shop: HandlerRegistry, sources: string | readonly string[]): HandlerRegistry {
  const adapted = new HandlerRegistry();
  for (const source of typeof sources === 'string' ? [sources] : sources) {
    for (const status of invoiceStatuses) {
      const type = invoiceEventType(status);
      const registered = shop.resolve(source, type);
      if (!registered) continue;
      const schema: PayloadSchema<unknown> | undefined = registered.schema
        ? { safeParse: (value) => registered.schema!.safeParse(inShopTerms(value)) }
        : undefined;
      adapted.on(source, type, registered.handler, schema ? { schema } : {});
    }
  }
  return adapted;
}

/** An order's invoice in the shop's terms; an invoice without an order (what prove sends) is left as it is. */
function inShopTerms(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const envelope = value as { data?: Record<string, unknown> };
  const data = envelope.data;
  if (!data || data.order_id === undefined || typeof data.amount !== 'string' || !/^\d+(\.\d{1,2})?$/.test(data.amount)) return value;
  const id = data.id ?? data.invoice_id;
  return { ...envelope, data: { ...data, id, amount: Math.round(Number(data.amount) * 100) } };
}

/** The shop's side of creating an invoice: the order it pays, with the same amount. */
export async function createShopOrders(db: Queryable, invoices: readonly PlannedInvoice[]): Promise<void> {
  for (let i = 0; i < invoices.length; i += 500) {
    const batch = invoices.slice(i, i + 500);
    await db.query(
      `INSERT INTO example_orders (id, amount_minor, currency)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) ON CONFLICT (id) DO NOTHING`,
      [batch.map((x) => x.orderId), batch.map((x) => Math.round(Number(x.amount) * 100)), batch.map((x) => x.currency)],
    );
  }
}
