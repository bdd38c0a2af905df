import { describe, expect, it } from 'vitest';
import { finalStatus, invoicePaths, paidAmountAt, planInvoices, seededRandom } from './lifecycle.js';

describe('invoice lifecycles', () => {
  it('the same seed plans the same run; every path is taken and ends in a terminal state', () => {
    const plan = (seed: number) => planInvoices({ count: 1000, runId: 'r1', random: seededRandom(seed), reorderRate: 0.2 });
    expect(plan(7)).toEqual(plan(7));
    expect(plan(7)).not.toEqual(plan(8));
    const invoices = plan(7);
    expect(new Set(invoices.map((i) => i.path))).toEqual(new Set(Object.keys(invoicePaths)));
    for (const i of invoices) expect(['paid', 'paid_over', 'underpaid', 'expired']).toContain(finalStatus(i));
    // Only invoices with more than one event can be sent out of order; about the asked share are.
    expect(invoices.filter((i) => i.reversed && i.steps.length === 1)).toEqual([]);
    const share = invoices.filter((i) => i.reversed).length / invoices.filter((i) => i.steps.length > 1).length;
    expect(share).toBeGreaterThan(0.1);
    expect(share).toBeLessThan(0.3);
    expect(new Set(invoices.map((i) => i.id)).size).toBe(1000);
  });

  it('paid amounts follow the status', () => {
    expect(paidAmountAt('paid', '49.90')).toBe('49.90');
    expect(paidAmountAt('paid_over', '49.90')).toBe('54.90');
    expect(paidAmountAt('underpaid', '49.90')).toBe('24.95');
    expect(paidAmountAt('expired', '49.90')).toBe('0.00');
  });
});
