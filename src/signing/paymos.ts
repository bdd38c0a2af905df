import { getHeader } from './common.js';
import type { SignatureScheme } from './types.js';
import { signTimestamped, verifyTimestamped } from './timestamped.js';

const SIGNATURE_HEADER = 'X-Webhook-Signature';
const ID_HEADER = 'X-Webhook-Id';
const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';

/**
 * Paymos: `X-Webhook-Signature: t=<unix>,v1=<hex>[,v1=…]` over `<t>.<raw body>`, keyed with the whole
 * `whsec_…` string. The envelope is `{event_id, event_type, version, occurred_at, data}` and the same
 * event id travels as `X-Webhook-Id`.
 */
export function createPaymosScheme(): SignatureScheme {
  return {
    name: 'paymos',
    idHeader: ID_HEADER,
    idPrefix: 'evt_',
    defaults: {
      event_id: ['body:event_id', 'header:x-webhook-id'],
      resource_id: ['body:data.invoice_id', 'body:data.withdrawal_id', 'body:data.deposit_id', 'body:data.id'],
      event_type: ['body:event_type'],
      occurred_at: ['body:occurred_at'],
    },
    verify(input) {
      const timestamp = verifyTimestamped(input, SIGNATURE_HEADER);
      const headerEventId = getHeader(input.headers, ID_HEADER);
      return headerEventId ? { timestamp, headerEventId } : { timestamp };
    },
    sign(input) {
      const { value, timestamp } = signTimestamped(input);
      const headers: Record<string, string> = {};
      if (input.id !== undefined) headers[ID_HEADER] = input.id;
      headers[TIMESTAMP_HEADER] = String(timestamp);
      headers[SIGNATURE_HEADER] = value;
      return headers;
    },
  };
}
