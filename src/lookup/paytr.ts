import { createHmac } from 'node:crypto';
import { TekilError } from '../errors.js';
import { isRecord, lookupRequest, textOf } from './http.js';
import type { PaymentLookup, ProviderPayment } from './types.js';

/** PayTR's answer when the order has no successful payment ("merchant_oid ile basarili odeme bulunamadi"). */
const NO_SUCCESSFUL_PAYMENT = '004';

/** `paytr_token` of a status query: base64(HMAC-SHA256(merchant_key, merchant_id + merchant_oid + merchant_salt)). */
export function paytrStatusToken(merchantId: string, merchantOid: string, merchantSalt: string, merchantKey: string): string {
  return createHmac('sha256', merchantKey)
    .update(merchantId + merchantOid + merchantSalt)
    .digest('base64');
}

/**
 * PayTR's status query (Durum Sorgu, dev.paytr.com/durum-sorgu): a form POST of `merchant_id`,
 * `merchant_oid` and `paytr_token`, answered in JSON. `status: success` is a successful payment with
 * `payment_total` (what the customer paid, `10,8`) and `currency` (`TL`); `status: error` with
 * `err_no` 004 says the order has no successful payment, which is the status `failed` of PayTR's
 * own notification. Any other error (a wrong token, an unknown merchant) is a failed lookup.
 */
export async function paytrStatusQuery(
  lookup: Extract<PaymentLookup, { provider: 'paytr' }>,
  merchantOid: string,
  timeoutMs: number,
): Promise<ProviderPayment> {
  const form = new URLSearchParams({
    merchant_id: lookup.merchantId,
    merchant_oid: merchantOid,
    paytr_token: paytrStatusToken(lookup.merchantId, merchantOid, lookup.merchantSalt, lookup.merchantKey),
  });
  const json = await lookupRequest(
    "PayTR's status query",
    lookup.url,
    { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
    timeoutMs,
  );
  if (!isRecord(json)) throw new TekilError('PAYMENT_LOOKUP_FAILED', "PayTR's status query did not answer with a JSON object");
  if (json.status === 'success') return { status: 'success', amount: textOf(json.payment_total), currency: textOf(json.currency), id: null };
  if (json.status === 'error' && textOf(json.err_no) === NO_SUCCESSFUL_PAYMENT) return { status: 'failed', amount: null, currency: null, id: null };
  throw new TekilError(
    'PAYMENT_LOOKUP_FAILED',
    `PayTR's status query answered ${String(json.status)} ${textOf(json.err_no) ?? ''}: ${textOf(json.err_msg) ?? ''}`.trim(),
    {
      hint: 'check confirm.fetch.merchant_id and the paytr block (merchant_key, merchant_salt)',
    },
  );
}
