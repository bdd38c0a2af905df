import { createHmac } from 'node:crypto';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import { createScheme, hmacSchemeOptions } from '../src/signing/index.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { startSink, type Sink, type SinkRequest } from './helpers/sink.js';

const stripe = new Stripe('sk_test_signature_checks_only');

function headerMap(req: SinkRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
}

describe('outbox: signatures verify with the official libraries, also during a rotation', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let dispatcher: Dispatcher;
  const sinks: Record<'standard' | 'paymos' | 'stripe', Sink> = {} as never;
  const endpoints: Record<string, { id: string; secret: string }> = {};
  const sinksToClose: Sink[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db, {});
    for (const scheme of ['standard', 'paymos', 'stripe'] as const) {
      sinks[scheme] = await startSink();
      const { endpoint, secret } = await h.endpoints.create(t.db, { url: sinks[scheme].url, scheme });
      endpoints[scheme] = { id: endpoint.id, secret };
    }
    dispatcher = h.newDispatcher();
    await dispatcher.start();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all([...Object.values(sinks), ...sinksToClose].map((s) => s.close()));
    await t?.close();
  });

  it('signs with Standard Webhooks (standardwebhooks) and t=,v1= (stripe verifyHeader)', async () => {
    const { id } = await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', resourceId: 'inv_9', data: { amount: 5 } }));
    await Promise.all(Object.values(sinks).map((s) => s.waitFor(1)));

    const std = sinks.standard.requests[0]!;
    const verified = new Webhook(endpoints.standard!.secret).verify(std.body, headerMap(std)) as { event_id: string };
    expect(verified.event_id).toBe(id);
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify(std.body, headerMap(std))).toThrow();

    for (const scheme of ['paymos', 'stripe'] as const) {
      const req = sinks[scheme].requests[0]!;
      const header = scheme === 'paymos' ? req.headers['x-webhook-signature'] : req.headers['stripe-signature'];
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(stripe.webhooks.signature!.verifyHeader(req.body.toString('utf8'), header as string, endpoints[scheme]!.secret)).toBe(true);
      expect(req.headers['x-webhook-id']).toBe(id);
    }
  });

  it('carries both signatures inside the rotation window; either secret verifies', async () => {
    const rotated: Record<string, string> = {};
    for (const scheme of ['standard', 'paymos', 'stripe'] as const) {
      rotated[scheme] = (await h.endpoints.rotateSecret(t.db, endpoints[scheme]!.id)).secret;
      expect(rotated[scheme]).not.toBe(endpoints[scheme]!.secret);
    }
    await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { n: 2 } }));
    await Promise.all(Object.values(sinks).map((s) => s.waitFor(2)));

    const std = sinks.standard.requests[1]!;
    expect(String(std.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoints.standard!.secret, rotated.standard!]) {
      expect(() => new Webhook(secret).verify(std.body, headerMap(std))).not.toThrow();
    }
    for (const scheme of ['paymos', 'stripe'] as const) {
      const req = sinks[scheme].requests[1]!;
      const header = String(scheme === 'paymos' ? req.headers['x-webhook-signature'] : req.headers['stripe-signature']);
      expect(header.match(/v1=/g)).toHaveLength(2);
      for (const secret of [endpoints[scheme]!.secret, rotated[scheme]!]) {
        expect(stripe.webhooks.signature!.verifyHeader(req.body.toString('utf8'), header, secret)).toBe(true);
      }
    }
  });

  it('stops signing with the old secret when the window ends', async () => {
    const ep = endpoints.standard!;
    const { secret: newest } = await h.endpoints.rotateSecret(t.db, ep.id, 0);
    await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { n: 3 } }));
    await sinks.standard.waitFor(3);
    const req = sinks.standard.requests[2]!;
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(newest).verify(req.body, headerMap(req))).not.toThrow();
    expect(() => new Webhook(ep.secret).verify(req.body, headerMap(req))).toThrow();
  });

  it('signs GitHub (@octokit/webhooks-methods), Shopify and a described hmac scheme, by hand with node:crypto too', async () => {
    const hmacOptions = {
      signature_header: 'X-Acme-Signature',
      algorithm: 'sha512',
      encoding: 'base64',
      prefix: 'sha512=',
      signed_payload: '{id}:{timestamp}:{body}',
      timestamp_header: 'X-Acme-Timestamp',
      id_header: 'X-Acme-Event',
    } as const;
    const more: Record<'github' | 'shopify' | 'hmac', { sink: Sink; id: string; secret: string }> = {} as never;
    for (const scheme of ['github', 'shopify', 'hmac'] as const) {
      const sink = await startSink();
      sinksToClose.push(sink);
      // Its own event type, so the endpoints above (every type) and these share no request counts.
      const { endpoint, secret } = await h.endpoints.create(t.db, {
        url: sink.url,
        scheme,
        event_types: ['repo.*'],
        ...(scheme === 'hmac' ? { hmac: hmacOptions } : {}),
      });
      expect(endpoint.hmac).toEqual(scheme === 'hmac' ? expect.objectContaining(hmacOptions) : null);
      more[scheme] = { sink, id: endpoint.id, secret };
    }
    // A rotation: GitHub and Shopify requests then carry one signature, made with the current secret.
    const rotated = (await h.endpoints.rotateSecret(t.db, more.github.id)).secret;
    const { id } = await t.db.transaction((tx) => publish(tx, { type: 'repo.pushed', data: { n: 4 } }));
    await Promise.all(Object.values(more).map((m) => m.sink.waitFor(1)));

    const gh = more.github.sink.requests[0]!;
    expect(gh.headers['x-github-event']).toBe('repo.pushed');
    expect(gh.headers['x-github-delivery']).toBe(id);
    const ghSignature = String(gh.headers['x-hub-signature-256']);
    expect(await verifyGithub(rotated, gh.body.toString('utf8'), ghSignature)).toBe(true);
    expect(await verifyGithub(more.github.secret, gh.body.toString('utf8'), ghSignature)).toBe(false);

    const shop = more.shopify.sink.requests[0]!;
    expect(shop.headers['x-shopify-topic']).toBe('repo.pushed');
    expect(shop.headers['x-shopify-webhook-id']).toBe(id);
    expect(shop.headers['x-shopify-hmac-sha256']).toBe(createHmac('sha256', more.shopify.secret).update(shop.body).digest('base64'));
    expect(() => createScheme('shopify').verify({ body: shop.body, headers: shop.headers, secrets: [more.shopify.secret], toleranceSec: 300 })).not.toThrow();

    const acme = more.hmac.sink.requests[0]!;
    const timestamp = String(acme.headers['x-acme-timestamp']);
    expect(acme.headers['x-acme-event']).toBe(id);
    const byHand = createHmac('sha512', more.hmac.secret).update(`${id}:${timestamp}:`).update(acme.body).digest('base64');
    expect(acme.headers['x-acme-signature']).toBe(`sha512=${byHand}`);
    expect(() =>
      createScheme('hmac', hmacSchemeOptions.parse(hmacOptions)).verify({
        body: acme.body,
        headers: acme.headers,
        secrets: [more.hmac.secret],
        toleranceSec: 300,
      }),
    ).not.toThrow();
  });

  it('refuses an hmac endpoint without its description, and a description on another scheme', async () => {
    await expect(h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/x', scheme: 'hmac' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/x', scheme: 'github', hmac: { signature_header: 'X-Sig' } })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    const { endpoint } = await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/x', scheme: 'hmac', hmac: { signature_header: 'X-Sig' }, enabled: false });
    // Leaving hmac drops the description; coming back needs one again.
    expect((await h.endpoints.update(t.db, endpoint.id, { scheme: 'shopify' })).hmac).toBeNull();
    await expect(h.endpoints.update(t.db, endpoint.id, { scheme: 'hmac' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await h.endpoints.update(t.db, endpoint.id, { scheme: 'hmac', hmac: { signature_header: 'X-Other' } })).hmac).toMatchObject({
      signature_header: 'X-Other',
      encoding: 'hex',
    });
  });
});
