import { TekilError } from '../errors.js';
import {
  anySignatureMatches,
  base64SecretKey,
  bodyBytes,
  checkTolerance,
  decodeSignature,
  getHeader,
  headerLines,
  hmac,
  invalid,
  malformed,
  newDeliveryId,
  nowSeconds,
  parseTimestamp,
  requireSecrets,
} from './common.js';
import type { IncomingHeaders, SignatureScheme } from './types.js';

/**
 * Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64> [v1,<base64>…]`, HMAC-SHA256 over `<id>.<timestamp>.<body>` keyed
 * with the base64 secret after `whsec_`. Svix sends the same with `svix-` header names.
 */

function header(headers: IncomingHeaders, suffix: 'id' | 'timestamp' | 'signature'): string | undefined {
  return getHeader(headers, `webhook-${suffix}`) ?? getHeader(headers, `svix-${suffix}`);
}

/** The signature header's non-blank lines (`webhook-signature`, else `svix-signature`). */
function signatureHeaderLines(headers: IncomingHeaders): string[] {
  for (const name of ['webhook-signature', 'svix-signature']) {
    const lines = headerLines(headers, name).filter((line) => line.trim() !== '');
    if (lines.length > 0) return lines;
  }
  return [];
}

function mac(key: Buffer, id: string, timestampText: string, body: Buffer): Buffer {
  return hmac('sha256', key, [id, '.', timestampText, '.', body]);
}

export function createStandardScheme(): SignatureScheme {
  return {
    name: 'standard',
    idHeader: 'webhook-id',
    idPrefix: 'msg_',
    defaults: {
      event_id: ['header:webhook-id', 'header:svix-id'],
      resource_id: ['body:data.id'],
      event_type: ['body:type'],
      occurred_at: ['body:timestamp'],
    },
    verify(input) {
      requireSecrets(input.secrets);
      const signatureLines = signatureHeaderLines(input.headers);
      if (signatureLines.length === 0) throw new TekilError('SIGNATURE_MISSING', 'missing webhook-signature header');
      const id = header(input.headers, 'id');
      if (id === undefined || id === '') throw malformed('missing webhook-id header (it is part of the signed content)');
      const timestampText = header(input.headers, 'timestamp');
      const timestamp = parseTimestamp(timestampText, 'webhook-timestamp');

      let v1Count = 0;
      const candidates: Buffer[] = [];
      for (const entry of signatureLines.flatMap((line) => line.trim().split(/\s+/))) {
        const comma = entry.indexOf(',');
        if (comma < 0 || entry.slice(0, comma) !== 'v1') continue; // other versions (v1a, v2…) are not ours
        v1Count++;
        const decoded = decodeSignature(entry.slice(comma + 1), 'base64');
        if (decoded) candidates.push(decoded);
      }
      if (v1Count === 0) throw malformed('webhook-signature holds no v1 signature');
      if (candidates.length === 0) throw malformed('webhook-signature: no v1 value is base64');

      const expected = input.secrets.map((secret) => mac(base64SecretKey(secret), id, timestampText as string, input.body));
      if (!anySignatureMatches(expected, candidates)) throw invalid('webhook-signature', candidates.length, expected.length);
      checkTolerance(timestamp, input.toleranceSec, input.now);
      return { headerEventId: id, timestamp };
    },
    sign(input) {
      requireSecrets(input.secrets);
      const id = input.id ?? newDeliveryId('msg_');
      const timestamp = String(input.timestamp ?? nowSeconds());
      const body = bodyBytes(input.body);
      const signatures = input.secrets.map((secret) => `v1,${mac(base64SecretKey(secret), id, timestamp, body).toString('base64')}`);
      return {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signatures.join(' '),
      };
    },
  };
}
