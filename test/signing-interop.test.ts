import { randomBytes } from 'node:crypto';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { createScheme } from '../src/signing/index.js';
import type { IncomingHeaders } from '../src/signing/index.js';

/** tekil against the providers' own libraries, in both directions. */

const lower = (headers: Record<string, string>): IncomingHeaders => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

const body = '{"id":"evt_1","type":"invoice.paid","data":{"id":"inv_9","amount":"12.50","note":"çağrı ✓"}}';

describe('Standard Webhooks (standardwebhooks package)', () => {
  const scheme = createScheme('standard');
  const secret = `whsec_${randomBytes(32).toString('base64')}`;

  it('verifies the published test vector', () => {
    const result = scheme.verify({
      body: Buffer.from('{"test": 2432232314}'),
      headers: {
        'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
        'webhook-timestamp': '1614265330',
        'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
      },
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      toleranceSec: 300,
      now: 1614265330_000,
    });
    expect(result).toEqual({ headerEventId: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330 });
  });

  it('signs the published test vector byte for byte', () => {
    const headers = scheme.sign({
      body: '{"test": 2432232314}',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
    });
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('verifies what the official library signs (webhook- and svix- header names)', () => {
    const now = new Date();
    const signature = new Webhook(secret).sign('msg_interop1', now, body);
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const asWebhook = { 'webhook-id': 'msg_interop1', 'webhook-timestamp': timestamp, 'webhook-signature': signature };
    const asSvix = { 'svix-id': 'msg_interop1', 'svix-timestamp': timestamp, 'svix-signature': signature };
    for (const headers of [asWebhook, asSvix]) {
      expect(scheme.verify({ body: Buffer.from(body), headers, secrets: [secret], toleranceSec: 300 }).headerEventId).toBe('msg_interop1');
    }
  });

  it('signs what the official library verifies, with one secret or during a rotation', () => {
    const next = `whsec_${randomBytes(24).toString('base64')}`;
    const headers = scheme.sign({ body, secrets: [secret, next], id: 'msg_interop2' });
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(next).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(body, headers)).toThrow();
  });
});

describe('Stripe (stripe package)', () => {
  const scheme = createScheme('stripe');
  const secret = `whsec_${randomBytes(16).toString('hex')}`;

  it('verifies what Stripe signs', () => {
    const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
    const result = scheme.verify({ body: Buffer.from(body), headers: { 'stripe-signature': header }, secrets: [secret], toleranceSec: 300 });
    expect(result.timestamp).toBeTypeOf('number');
  });

  it('signs what Stripe verifies, with one secret or during a rotation', () => {
    const next = `whsec_${randomBytes(16).toString('hex')}`;
    const header = scheme.sign({ body, secrets: [secret, next] })['Stripe-Signature'];
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(Stripe.webhooks.constructEvent(body, header as string, secret, 300).id).toBe('evt_1');
    expect(Stripe.webhooks.signature?.verifyHeader(body, header as string, next, 300)).toBe(true);
    expect(() => Stripe.webhooks.constructEvent(body, header as string, 'whsec_other', 300)).toThrow();
  });
});

describe('GitHub (@octokit/webhooks-methods)', () => {
  const scheme = createScheme('github');
  const secret = randomBytes(20).toString('hex');

  it('verifies what octokit signs', async () => {
    const signature = await octokitSign(secret, body);
    const result = scheme.verify({
      body: Buffer.from(body),
      headers: { 'x-hub-signature-256': signature, 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
      secrets: [secret],
      toleranceSec: 300,
    });
    expect(result).toEqual({ headerEventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
  });

  it('signs what octokit verifies', async () => {
    const headers = lower(scheme.sign({ body, secrets: [secret], id: 'd-1' }));
    expect(headers['x-github-delivery']).toBe('d-1');
    expect(await octokitVerify(secret, body, headers['x-hub-signature-256'] as string)).toBe(true);
    expect(await octokitVerify('not-the-secret', body, headers['x-hub-signature-256'] as string)).toBe(false);
  });
});
