import { createHmacScheme, hmacSchemeOptions } from './hmac.js';
import type { SignatureScheme } from './types.js';

/**
 * Craftgate's transaction webhook (developer.craftgate.io, "Webhook > İşlem Bildirimi"): a JSON POST
 * whose `X-CG-SIGNATURE-V1` header is
 * `base64(HMAC-SHA256(merchant webhook key, eventType + eventTimestamp + status + payloadId))`,
 * the four body fields concatenated without separators, as Craftgate's official clients compute it
 * (craftgate-node-client `HookAdapter.isWebhookVerified`). `eventTimestamp` is a JSON number and is
 * signed as the digits sent. The key is the source's secret: the panel's "Webhook Key" under
 * Ayarlar > Üye İşyeri Ayarları.
 */
export const CRAFTGATE_SIGNATURE_HEADER = 'X-CG-SIGNATURE-V1';

export const craftgateHmacOptions = hmacSchemeOptions.parse({
  algorithm: 'sha256',
  signature_header: CRAFTGATE_SIGNATURE_HEADER,
  encoding: 'base64',
  signed_payload: '{body:eventType}{body:eventTimestamp}{body:status}{body:payloadId}',
});

export function createCraftgateScheme(): SignatureScheme {
  return {
    ...createHmacScheme(craftgateHmacOptions),
    name: 'craftgate',
    defaults: {
      // One notification per operation result: what happened (type), to what (payloadId) and how
      // (status), all three signed, so no copy can look new and a FAILURE never hides a SUCCESS.
      event_id: [{ all: ['body:eventType', 'body:payloadId', 'body:status'] }],
      resource_id: ['body:payloadId'],
      event_type: ['body:eventType'],
      occurred_at: ['body:eventTimestamp'],
    },
  };
}
