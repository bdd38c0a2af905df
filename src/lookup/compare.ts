import type { ConfirmExpect } from '../config/confirm.js';
import { isNotificationLocator } from '../config/confirm.js';
import { TekilError, type ErrorCode } from '../errors.js';
import type { RequestFields } from '../signing/request-fields.js';
import { formatAmount, parseAmount, sameAmount, sameCurrency } from './amount.js';
import type { ProviderPayment } from './types.js';

/** How the notification and the provider's payment compared: the same, or the first difference. */
export type Comparison = { ok: true; summary: string } | { ok: false; error: TekilError };

const mismatch = (code: ErrorCode, message: string): Comparison => ({ ok: false, error: new TekilError(code, message) });

/** A value the source expects: read from the notification when it is a locator, else the fixed value itself. */
function expected(fields: RequestFields, value: string): string | undefined {
  return isNotificationLocator(value) ? fields.read(value) : value;
}

/**
 * Compares the payment the provider reports with what the notification says: the status first,
 * then the amount and the currency. A value the source expects but the notification lacks is a
 * mismatch (nothing unverified reaches the effect); a value the provider reports none of (PayTR's
 * answer for an order without a successful payment) is not compared once the statuses agree.
 */
export function comparePayment(expect: ConfirmExpect, fields: RequestFields, payment: ProviderPayment, provider: string): Comparison {
  const said: string[] = [];
  if (expect.status !== undefined) {
    const notified = expected(fields, expect.status);
    if (notified === undefined) return mismatch('STATUS_MISMATCH', `the notification carries no status at ${expect.status}`);
    if (notified.trim().toLowerCase() !== payment.status.trim().toLowerCase()) {
      return mismatch('STATUS_MISMATCH', `the notification says status ${notified}, ${provider} says ${payment.status}`);
    }
    said.push(`status ${payment.status}`);
  }
  if (expect.amount !== undefined && payment.amount !== null) {
    const text = fields.read(expect.amount.at);
    const notified = text === undefined ? undefined : parseAmount(text, expect.amount.minor_units);
    if (notified === undefined) return mismatch('AMOUNT_MISMATCH', `the notification carries no amount at ${expect.amount.at}`);
    const reported = parseAmount(payment.amount);
    if (reported === undefined) return mismatch('AMOUNT_MISMATCH', `${provider} reports an amount that is not a number: ${payment.amount.slice(0, 40)}`);
    if (!sameAmount(notified, reported)) {
      return mismatch('AMOUNT_MISMATCH', `the notification says ${formatAmount(notified)}, ${provider} says ${formatAmount(reported)}`);
    }
    said.push(`amount ${formatAmount(reported)}`);
  }
  if (expect.currency !== undefined && payment.currency !== null) {
    const notified = expected(fields, expect.currency);
    if (notified === undefined) return mismatch('CURRENCY_MISMATCH', `the notification carries no currency at ${expect.currency}`);
    if (!sameCurrency(notified, payment.currency)) {
      return mismatch('CURRENCY_MISMATCH', `the notification says currency ${notified}, ${provider} says ${payment.currency}`);
    }
    said.push(`currency ${payment.currency}`);
  }
  return { ok: true, summary: said.join(', ') };
}
