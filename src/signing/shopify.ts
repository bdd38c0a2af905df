import { randomUUID } from 'node:crypto';
import {
  anySignatureMatches,
  bodyBytes,
  decodeSignature,
  getHeader,
  hmac,
  invalid,
  malformed,
  nowSeconds,
  requireSecrets,
  requireSignatureLines,
} from './common.js';
import type { SignatureScheme } from './types.js';

const SIGNATURE_HEADER = 'X-Shopify-Hmac-Sha256';
const ID_HEADER = 'X-Shopify-Webhook-Id';
const TRIGGERED_AT_HEADER = 'X-Shopify-Triggered-At';

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64>` over the raw body, keyed with the app's client secret as
 * UTF-8. No signed timestamp (`X-Shopify-Triggered-At` is informational), so tolerance does not apply.
 * Several comma-separated signatures are accepted so a rotation can be rehearsed.
 */
export function createShopifyScheme(): SignatureScheme {
  return {
    name: 'shopify',
    idHeader: ID_HEADER,
    defaults: {
      event_id: ['header:x-shopify-webhook-id'],
      resource_id: ['body:id'],
      event_type: ['header:x-shopify-topic'],
      occurred_at: ['header:x-shopify-triggered-at'],
    },
    verify(input) {
      requireSecrets(input.secrets);
      const lines = requireSignatureLines(input.headers, SIGNATURE_HEADER);
      const candidates = lines
        .flatMap((line) => line.split(','))
        .map((s) => decodeSignature(s.trim(), 'base64'))
        .filter((b): b is Buffer => b !== undefined);
      if (candidates.length === 0) throw malformed(`${SIGNATURE_HEADER}: the signature is not base64`);
      const expected = input.secrets.map((secret) => hmac('sha256', secret, [input.body]));
      if (!anySignatureMatches(expected, candidates)) throw invalid(SIGNATURE_HEADER, candidates.length, expected.length);
      const headerEventId = getHeader(input.headers, ID_HEADER);
      return headerEventId ? { headerEventId } : {};
    },
    sign(input) {
      requireSecrets(input.secrets);
      const body = bodyBytes(input.body);
      const signatures = input.secrets.map((secret) => hmac('sha256', secret, [body]).toString('base64'));
      return {
        [ID_HEADER]: input.id ?? randomUUID(),
        [TRIGGERED_AT_HEADER]: new Date((input.timestamp ?? nowSeconds()) * 1000).toISOString(),
        [SIGNATURE_HEADER]: signatures.join(', '),
      };
    },
  };
}
