import { TekilError } from '../errors.js';
import { isRecord, lookupRequest, textOf } from './http.js';
import type { PaymentLookup, ProviderPayment } from './types.js';

/**
 * Papara's payment get (`GET /payments?id=<payment id>`, header `ApiKey`): `{ data: <payment>,
 * succeeded: true }`, the payment with `status` (0 awaiting, 1 completed, 2 refunded), `amount` and
 * `currency` (Papara's currency number), the same fields its notification carries.
 */
export async function paparaGetPayment(lookup: Extract<PaymentLookup, { provider: 'papara' }>, paymentId: string, timeoutMs: number): Promise<ProviderPayment> {
  const url = new URL(`${lookup.apiBase.replace(/\/+$/, '')}/payments`);
  url.searchParams.set('id', paymentId);
  const json = await lookupRequest("Papara's payment get", url.toString(), { method: 'GET', headers: { ApiKey: lookup.apiKey } }, timeoutMs);
  if (!isRecord(json) || json.succeeded !== true || !isRecord(json.data)) {
    const error = isRecord(json) && isRecord(json.error) ? json.error : {};
    throw new TekilError('PAYMENT_LOOKUP_FAILED', `Papara's payment get did not succeed ${textOf(error.code) ?? ''}: ${textOf(error.message) ?? ''}`.trim(), {
      hint: 'check confirm.fetch.api_key',
    });
  }
  const status = textOf(json.data.status);
  if (status === null) throw new TekilError('PAYMENT_LOOKUP_FAILED', "Papara's payment get answered a payment without a status");
  return { status, amount: textOf(json.data.amount), currency: textOf(json.data.currency), id: textOf(json.data.id) };
}
