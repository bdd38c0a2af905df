import { createHmacScheme, hmacSchemeOptions } from './hmac.js';
import type { SignatureScheme } from './types.js';

/**
 * PayTR's payment notification ("Bildirim URL", iFrame API and Direkt API step 2): a form POST with
 * `merchant_oid`, `status`, `total_amount` and `hash`, where
 * `hash = base64(HMAC-SHA256(merchant_key, merchant_oid + merchant_salt + status + total_amount))`.
 * PayTR keeps notifying until the answer body is the plain text `OK`, and may notify a payment more
 * than once, so the answer to a duplicate is `OK` too. The key is the source's `paytr.merchant_key`,
 * the salt its `paytr.merchant_salt` (named secret `salt`).
 */
export const paytrHmacOptions = hmacSchemeOptions.parse({
  algorithm: 'sha256',
  signature: 'form:hash',
  encoding: 'base64',
  signed_payload: '{form:merchant_oid}{secret:salt}{form:status}{form:total_amount}',
});

export function createPaytrScheme(): SignatureScheme {
  return {
    ...createHmacScheme(paytrHmacOptions),
    name: 'paytr',
    defaults: {
      // One notification per payment result: the order and its outcome (both signed) are the delivery.
      event_id: [{ all: ['form:merchant_oid', 'form:status'] }],
      resource_id: ['form:merchant_oid'],
      event_type: ['form:status'],
      occurred_at: [],
    },
    ack: { status: 200, content_type: 'text/plain', body: 'OK' },
  };
}
