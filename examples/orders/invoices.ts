import type { Queryable } from '../../src/store/db.js';
import type { ProveControl } from './prove-endpoints.js';

/** States an invoice never leaves: a late `confirming` after `paid` changes nothing. */
const terminalStates = ['paid', 'paid_over', 'underpaid', 'expired', 'cancelled'];

/**
 * A standalone invoice's event, inside the handler's transaction: the state moves forward only, and
 * `invoice.paid` credits the customer once (the conditional update is the shop's own second lock,
 * behind tekil's deduplication). The prove control switches act here, after the work has started,
 * so a "crash" rolls back a write that was really made.
 */
/** Resolves true when this event credited the customer (the one `invoice.paid` effect). */
export async function applyStandaloneInvoice(tx: Queryable, invoiceId: string, status: string, eventId: string, control?: ProveControl): Promise<boolean> {
  const paid = status === 'paid';
  const updated = await tx.query(
    `INSERT INTO example_invoices (id, status, paid_effects) VALUES ($1, $2, $3)
     ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, updated_at = now(),
       paid_effects = example_invoices.paid_effects + EXCLUDED.paid_effects
     WHERE NOT (example_invoices.status = ANY ($4::text[]))`,
    [invoiceId, status, paid ? 1 : 0, terminalStates],
  );
  if (updated.rowCount === 1) {
    await tx.query('INSERT INTO example_ledger (order_id, event_id, kind) VALUES ($1, $2, $3)', [invoiceId, eventId, `invoice_${status}`]);
  }
  const slowMs = control?.takeSlowMs() ?? 0;
  if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
  if (control?.takeFail()) throw new Error(`fail-next: the run for ${eventId} crashed mid-work (its writes roll back)`);
  return paid && updated.rowCount === 1;
}
