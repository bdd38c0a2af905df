import { createHmac, randomBytes } from 'node:crypto';
import { TekilError } from '../errors.js';
import { isRecord, lookupRequest, textOf } from './http.js';
import type { PaymentLookup, ProviderPayment } from './types.js';

export const IYZICO_RETRIEVE_PATH = '/payment/detail';

/**
 * iyzico's `Authorization: IYZWSv2 …` of one request, as its official libraries make it:
 * signature = hex(HMAC-SHA256(secret key, random key + request path + JSON body)), then
 * base64("apiKey:<api key>&randomKey:<random key>&signature:<signature>").
 */
export function iyzicoAuthorization(apiKey: string, secretKey: string, randomKey: string, path: string, body: string): string {
  const signature = createHmac('sha256', secretKey)
    .update(randomKey + path + body)
    .digest('hex');
  return `IYZWSv2 ${Buffer.from(`apiKey:${apiKey}&randomKey:${randomKey}&signature:${signature}`).toString('base64')}`;
}

/**
 * iyzico's payment retrieve (`POST /payment/detail`): by `paymentId`, or by `paymentConversationId`
 * when no payment id is known. `status: success` carries the payment's own `paymentStatus`
 * (`SUCCESS`, `FAILURE`…), `paidPrice` and `currency`; `status: failure` (an unknown payment, a
 * wrong key) is a failed lookup.
 */
export async function iyzicoRetrievePayment(
  lookup: Extract<PaymentLookup, { provider: 'iyzico' }>,
  ids: { paymentId?: string; paymentConversationId?: string },
  timeoutMs: number,
): Promise<ProviderPayment> {
  const body = JSON.stringify({
    locale: 'tr',
    conversationId: ids.paymentId ?? ids.paymentConversationId,
    ...(ids.paymentId ? { paymentId: ids.paymentId } : {}),
    ...(ids.paymentConversationId ? { paymentConversationId: ids.paymentConversationId } : {}),
  });
  const randomKey = `${Date.now()}${randomBytes(6).toString('hex')}`;
  const url = new URL(lookup.apiBase.replace(/\/+$/, '') + IYZICO_RETRIEVE_PATH);
  const json = await lookupRequest(
    "iyzico's payment retrieve",
    url.toString(),
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: iyzicoAuthorization(lookup.apiKey, lookup.secretKey, randomKey, IYZICO_RETRIEVE_PATH, body),
        'x-iyzi-rnd': randomKey,
      },
      body,
    },
    timeoutMs,
  );
  if (!isRecord(json)) throw new TekilError('PAYMENT_LOOKUP_FAILED', "iyzico's payment retrieve did not answer with a JSON object");
  if (json.status !== 'success') {
    throw new TekilError(
      'PAYMENT_LOOKUP_FAILED',
      `iyzico's payment retrieve answered ${String(json.status)} ${textOf(json.errorCode) ?? ''}: ${textOf(json.errorMessage) ?? ''}`.trim(),
      { hint: 'check confirm.fetch.api_key and iyzico.secret_key (the same account as the notification)' },
    );
  }
  const status = textOf(json.paymentStatus);
  if (status === null) throw new TekilError('PAYMENT_LOOKUP_FAILED', "iyzico's payment retrieve answered without a paymentStatus");
  return { status, amount: textOf(json.paidPrice), currency: textOf(json.currency), id: textOf(json.paymentId) };
}
