import { describe, expect, it } from 'vitest';
import { createExtractor } from '../receiver/extract.js';
import { createScheme, schemeNames, type HmacSchemeOptions, type SchemeName } from '../signing/index.js';
import { signedInvoiceRequest, type InvoiceEvent } from './invoice-events.js';

const hmac: HmacSchemeOptions = {
  algorithm: 'sha256',
  signature_header: 'x-signature',
  encoding: 'hex',
  prefix: '',
  signed_payload: '{body}',
  secret_encoding: 'utf8',
};
const secretOf = (scheme: SchemeName) => (scheme === 'standard' ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : 'whsec_prove_secret_123');

describe('invoice events in every scheme', () => {
  const event: InvoiceEvent = {
    eventId: 'evt_01',
    invoiceId: 'inv_01',
    status: 'paid',
    amount: '49.90',
    paidAmount: '49.90',
    currency: 'TRY',
    occurredAt: new Date('2026-11-30T12:00:00Z'),
  };

  it.each(schemeNames.filter((n) => !['paytr', 'iyzico', 'papara', 'craftgate', 'sipay'].includes(n)))(
    '%s: verifies with tekil and yields the ids tekil extracts by default',
    (name) => {
      const options = name === 'hmac' ? { hmac } : {};
      const req = signedInvoiceRequest(name, [secretOf(name)], event, options);
      const scheme = createScheme(name, options.hmac);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
      const verified = scheme.verify({ body: req.body, headers, secrets: [secretOf(name)], toleranceSec: 0 });
      const fields = createExtractor({}, scheme.defaults)({ body: req.body, headers, headerEventId: verified.headerEventId });
      expect(fields.eventId).toBe('evt_01');
      // GitHub's default resource locators name GitHub's own objects: a receiver of invoices over the
      // github scheme configures `resource_id: body:data.id`.
      expect(fields.resourceId).toBe(name === 'github' ? null : 'inv_01');
      expect(fields.eventType).toBe('invoice.paid');
    },
  );

  // PayTR and iyzico carry no event id of their own: the delivery is the signed fields that name it.
  it('paytr: a signed form whose order and outcome are the delivery', () => {
    const req = signedInvoiceRequest('paytr', ['merchant-key'], event, { namedSecrets: { salt: 'merchant-salt' } });
    const scheme = createScheme('paytr');
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const verified = scheme.verify({
      body: req.body,
      headers: req.headers,
      secrets: ['merchant-key'],
      namedSecrets: { salt: 'merchant-salt' },
      toleranceSec: 0,
    });
    const fields = createExtractor({}, scheme.defaults)({ body: req.body, headers: req.headers, headerEventId: verified.headerEventId });
    expect(fields).toMatchObject({ eventId: 'inv01:success', resourceId: 'inv01', eventType: 'success' });
    expect(new URLSearchParams(req.body.toString()).get('total_amount')).toBe('4990');
  });

  it('iyzico: a direct-format notification', () => {
    const req = signedInvoiceRequest('iyzico', ['iyzico-secret'], event);
    const scheme = createScheme('iyzico');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
    scheme.verify({ body: req.body, headers, secrets: ['iyzico-secret'], toleranceSec: 0 });
    const fields = createExtractor({}, scheme.defaults)({ body: req.body, headers });
    expect(fields).toMatchObject({ eventId: 'API_AUTH:inv_01:SUCCESS', resourceId: 'inv_01', eventType: 'API_AUTH' });
  });

  it('papara: the payment object with the secret key in its body', () => {
    const req = signedInvoiceRequest('papara', ['papara-secret'], { ...event, orderId: 'order_9' });
    const scheme = createScheme('papara');
    scheme.verify({ body: req.body, headers: req.headers, secrets: ['papara-secret'], toleranceSec: 0 });
    expect(JSON.parse(req.body.toString()).merchantSecretKey).toBe('papara-secret');
    const fields = createExtractor({}, scheme.defaults)({ body: req.body, headers: req.headers });
    expect(fields).toMatchObject({ eventId: 'inv_01:1', resourceId: 'order_9', eventType: null });
  });

  it('craftgate: a transaction webhook signed with the merchant webhook key', () => {
    const req = signedInvoiceRequest('craftgate', ['hook-key'], event);
    const scheme = createScheme('craftgate');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
    scheme.verify({ body: req.body, headers, secrets: ['hook-key'], toleranceSec: 0 });
    const fields = createExtractor({}, scheme.defaults)({ body: req.body, headers });
    expect(fields).toMatchObject({ eventId: 'API_AUTH:inv_01:SUCCESS', resourceId: 'inv_01', eventType: 'API_AUTH' });
  });

  it('sipay: a notification whose hash_key token names the invoice and its outcome', () => {
    const req = signedInvoiceRequest('sipay', ['app-secret'], event);
    const scheme = createScheme('sipay');
    scheme.verify({ body: req.body, headers: {}, secrets: ['app-secret'], toleranceSec: 0 });
    const fields = createExtractor({}, scheme.defaults)({ body: req.body, headers: {} });
    expect(fields).toMatchObject({ eventId: 'inv_01:Completed', resourceId: 'inv_01', eventType: 'Completed' });
  });
});
