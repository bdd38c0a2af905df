// Standard Webhooks signing for the peers of bench:peers' sending path, with node:crypto as tekil's
// dispatcher signs (one HMAC-SHA256 over `<id>.<timestamp>.<body>`, keyed with the base64 secret after
// `whsec_`): the same signature as the standardwebhooks package gives (a test checks it), without that
// package's pure-JavaScript SHA-256, which costs several times node:crypto's and would count against
// the peers.
import { createHmac } from 'node:crypto';

export interface StandardHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function standardWebhooksSigner(secret: string): (id: string, timestampSec: number, body: string) => StandardHeaders {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return (id, timestampSec, body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': `v1,${createHmac('sha256', key).update(`${id}.${timestampSec}.`).update(body).digest('base64')}`,
  });
}
