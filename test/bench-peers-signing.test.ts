// bench:peers' peers sign with node:crypto (bench/peers/sign.ts) instead of the standardwebhooks
// package: the signature must be the package's, and tekil's own Standard Webhooks check must accept it.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { standardWebhooksSigner } from '../bench/peers/sign.js';
import { createScheme } from '../src/signing/index.js';

describe('bench:peers Standard Webhooks signing', () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const body = JSON.stringify({ type: 'invoice.paid', data: { invoice_id: 'inv_1', note: 'ç ş ğ' } });
  const timestamp = 1_764_800_000;
  const headers: Record<string, string> = { ...standardWebhooksSigner(secret)('msg_1', timestamp, body) };

  it('gives the standardwebhooks package signature', () => {
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body));
    expect(headers['webhook-timestamp']).toBe(String(timestamp));
  });

  it("passes tekil's Standard Webhooks check, and a changed body does not", () => {
    const scheme = createScheme('standard');
    const now = timestamp * 1000;
    expect(() => scheme.verify({ body: Buffer.from(body), headers, secrets: [secret], toleranceSec: 300, now })).not.toThrow();
    expect(() => scheme.verify({ body: Buffer.from(`${body} `), headers, secrets: [secret], toleranceSec: 300, now })).toThrow();
  });
});
