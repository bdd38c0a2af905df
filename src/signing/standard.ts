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
import { signParts, verifyParts } from './ed25519.js';
import type { IncomingHeaders, SignatureScheme } from './types.js';

/**
 * Standard Webhooks (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64> [v1,<base64>…]`, HMAC-SHA256 over `<id>.<timestamp>.<body>` keyed
 * with the base64 secret after `whsec_`. Svix sends the same with `svix-` header names. `v1a,<base64>`
 * is the asymmetric form: an Ed25519 signature over the same content, checked with a public key.
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

/** The header naming the key of each `v1a` signature, in order (see docs/signing.md, "Ed25519"). */
export const KEY_ID_HEADER = 'webhook-key-id';

/** The key ids a request names in `webhook-key-id` (space-separated, several lines joined). */
export function namedKeyIds(headers: IncomingHeaders): string[] {
  return headerLines(headers, KEY_ID_HEADER)
    .flatMap((line) => line.split(/[\s,]+/))
    .filter((kid) => kid !== '');
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
      const publicKeys = input.publicKeys ?? [];
      if (publicKeys.length === 0) requireSecrets(input.secrets);
      const signatureLines = signatureHeaderLines(input.headers);
      if (signatureLines.length === 0) throw new TekilError('SIGNATURE_MISSING', 'missing webhook-signature header');
      const id = header(input.headers, 'id');
      if (id === undefined || id === '') throw malformed('missing webhook-id header (it is part of the signed content)');
      const timestampText = header(input.headers, 'timestamp');
      const timestamp = parseTimestamp(timestampText, 'webhook-timestamp');

      // Only the versions this source can check count: v1 with secrets, v1a with public keys.
      const versions = [...(input.secrets.length > 0 ? ['v1'] : []), ...(publicKeys.length > 0 ? ['v1a'] : [])];
      let usable = 0;
      const candidates: Buffer[] = [];
      const asymmetric: Buffer[] = [];
      for (const entry of signatureLines.flatMap((line) => line.trim().split(/\s+/))) {
        const comma = entry.indexOf(',');
        const version = comma < 0 ? '' : entry.slice(0, comma);
        if (!versions.includes(version)) continue; // other versions (v2…) are not ours
        usable++;
        const decoded = decodeSignature(entry.slice(comma + 1), 'base64');
        if (decoded) (version === 'v1' ? candidates : asymmetric).push(decoded);
      }
      const named = versions.join(' or ');
      if (usable === 0) throw malformed(`webhook-signature holds no ${named} signature`);
      if (candidates.length === 0 && asymmetric.length === 0) throw malformed(`webhook-signature: no ${named} value is base64`);

      const expected = input.secrets.map((secret) => mac(base64SecretKey(secret), id, timestampText as string, input.body));
      // Every pair is checked, as for v1: the time taken does not tell which key matched.
      let matched = anySignatureMatches(expected, candidates);
      const parts = [id, '.', timestampText as string, '.', input.body];
      for (const signature of asymmetric) {
        for (const { key } of publicKeys) if (verifyParts(key, parts, signature)) matched = true;
      }
      if (!matched) throw invalid('webhook-signature', candidates.length + asymmetric.length, expected.length + publicKeys.length);
      checkTolerance(timestamp, input.toleranceSec, input.now);
      return { headerEventId: id, timestamp };
    },
    sign(input) {
      const signingKeys = input.signingKeys ?? [];
      if (signingKeys.length === 0) requireSecrets(input.secrets);
      const id = input.id ?? newDeliveryId('msg_');
      const timestamp = String(input.timestamp ?? nowSeconds());
      const body = bodyBytes(input.body);
      const signatures = input.secrets.map((secret) => `v1,${mac(base64SecretKey(secret), id, timestamp, body).toString('base64')}`);
      for (const { key } of signingKeys) signatures.push(`v1a,${signParts(key, [id, '.', timestamp, '.', body]).toString('base64')}`);
      const headers: Record<string, string> = {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signatures.join(' '),
      };
      // The spec's signature list has no slot for a key id: it goes beside it, one per v1a signature.
      if (signingKeys.length > 0) headers[KEY_ID_HEADER] = signingKeys.map((k) => k.kid).join(' ');
      return headers;
    },
  };
}
