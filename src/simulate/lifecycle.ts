import type { InvoiceStatus } from '../provider/invoice-events.js';

/**
 * What happens to each simulated invoice, decided up front from a seed so a run can be repeated.
 * Every path starts at `awaiting_payment` (not announced: the merchant created the invoice) and ends
 * in a terminal state; the steps are the statuses announced, in provider time.
 */
export const invoicePaths: Readonly<Record<string, readonly InvoiceStatus[]>> = {
  paid: ['confirming', 'paid'],
  paid_over: ['confirming', 'paid_over'],
  underpaid: ['confirming', 'underpaid_waiting', 'underpaid'],
  // The buyer tops up while the invoice waits: the same invoice ends paid.
  topped_up: ['confirming', 'underpaid_waiting', 'paid'],
  expired: ['expired'],
};

/** How often each path is taken: most invoices are paid, as at a real provider. */
const pathWeights: readonly [string, number][] = [
  ['paid', 60],
  ['paid_over', 8],
  ['underpaid', 8],
  ['topped_up', 8],
  ['expired', 16],
];

/** A small seeded generator (mulberry32): the same seed gives the same run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface PlannedInvoice {
  id: string;
  orderId: string;
  /** Decimal text, e.g. "49.90". */
  amount: string;
  currency: string;
  path: string;
  steps: readonly InvoiceStatus[];
  /** Publish this invoice's events latest first (the reordering fault). */
  reversed: boolean;
}

/** What the buyer has paid once the invoice reaches `status`. */
export function paidAmountAt(status: InvoiceStatus, amount: string): string {
  const minor = Math.round(Number(amount) * 100);
  switch (status) {
    case 'paid':
      return amount;
    case 'paid_over':
      return ((minor + 500) / 100).toFixed(2);
    case 'confirming':
      return amount;
    case 'underpaid_waiting':
    case 'underpaid':
      return (Math.floor(minor / 2) / 100).toFixed(2);
    default:
      return '0.00';
  }
}

export function planInvoices(options: { count: number; runId: string; random: () => number; reorderRate: number; currency?: string }): PlannedInvoice[] {
  const total = pathWeights.reduce((sum, [, w]) => sum + w, 0);
  const invoices: PlannedInvoice[] = [];
  for (let i = 0; i < options.count; i++) {
    let pick = options.random() * total;
    let path = pathWeights[0]![0];
    for (const [name, weight] of pathWeights) {
      if ((pick -= weight) < 0) {
        path = name;
        break;
      }
    }
    const steps = invoicePaths[path]!;
    const n = String(i + 1).padStart(6, '0');
    invoices.push({
      id: `inv_${options.runId}_${n}`,
      orderId: `ord_${options.runId}_${n}`,
      amount: ((1000 + Math.floor(options.random() * 99_000)) / 100).toFixed(2),
      currency: options.currency ?? 'TRY',
      path,
      steps,
      // Only an invoice with more than one event can arrive out of order.
      reversed: steps.length > 1 && options.random() < options.reorderRate,
    });
  }
  return invoices;
}

/** The status an invoice ends in: its last step in provider time, whatever order it was sent in. */
export function finalStatus(invoice: PlannedInvoice): InvoiceStatus {
  return invoice.steps[invoice.steps.length - 1]!;
}
