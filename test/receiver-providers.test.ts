import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseConfig } from '../src/config/index.js';
import { joinIdParts } from '../src/receiver/extract.js';
import { outboxParts } from '../src/outbox/parts.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { countRows, receiverApp, testContext } from './helpers/receiver.js';

/**
 * PayTR and iyzico notifications through the real HTTP receiver (a listening socket), on the store
 * under test. Signatures are computed here from the providers' documented formulas with node:crypto.
 */
const MERCHANT_KEY = 'KEYdemo123';
const MERCHANT_SALT = 'SALTdemo456';
const IYZICO_KEY = 'sandbox-secret-demo';
const MERCHANT_ID = '654321';

function paytrBody(post: { merchant_oid: string; status: string; total_amount: string }, extra: Record<string, string> = {}): string {
  const hash = createHmac('sha256', MERCHANT_KEY)
    .update(post.merchant_oid + MERCHANT_SALT + post.status + post.total_amount)
    .digest('base64');
  return new URLSearchParams({ ...post, hash, payment_type: 'card', currency: 'TL', test_mode: '1', ...extra }).toString();
}

const iyzicoSign = (text: string) => createHmac('sha256', IYZICO_KEY).update(text).digest('hex');

describe('PayTR and iyzico through the HTTP receiver', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    t = await createTestDb();
    const config = parseConfig({
      sources: {
        paytr: { scheme: 'paytr', paytr: { merchant_key: MERCHANT_KEY, merchant_salt: MERCHANT_SALT } },
        iyzico: { scheme: 'iyzico', iyzico: { secret_key: IYZICO_KEY, merchant_id: MERCHANT_ID } },
        // The generic contract the presets are made of: a form, a body signature, a template, a composite key, an answer.
        formhook: {
          scheme: 'hmac',
          secrets: ['k-old', 'k-new'],
          named_secrets: { pepper: 'p3pp3r' },
          hmac: { signature: 'form:sig', encoding: 'hex', algorithm: 'sha512', signed_payload: '{form:order}:{form:state}:{secret:pepper}' },
          event_id: { all: ['form:order', 'form:state'] },
          resource_id: 'form:order',
          event_type: 'form:state',
          ack: { status: 202, content_type: 'text/plain; charset=utf-8', body: 'alındı' },
        },
      },
    });
    ({ app } = await receiverApp(t.db, config));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });
  beforeEach(async () => {
    await t.db.query('DELETE FROM inbox_deliveries');
  });

  const post = async (source: string, body: string, contentType: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/in/${source}`, { method: 'POST', body, headers: { 'content-type': contentType, ...headers } });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };
  const FORM = 'application/x-www-form-urlencoded';

  it('a PayTR notification with a valid hash gets OK; a copy gets OK and no second row', async () => {
    const body = paytrBody({ merchant_oid: 'SIP1001', status: 'success', total_amount: '3456' });
    const first = await post('paytr', body, FORM);
    expect(first).toEqual({ status: 200, type: 'text/plain', text: 'OK' });
    const copy = await post('paytr', body, FORM);
    expect(copy).toEqual({ status: 200, type: 'text/plain', text: 'OK' });
    expect(await countRows(t.db)).toBe(1);

    const { rows } = await t.db.query<{ event_id: string; resource_id: string; event_type: string; body: Uint8Array; content_type: string; status: string }>(
      'SELECT event_id, resource_id, event_type, body, content_type, status FROM inbox_deliveries',
    );
    expect(rows[0]).toMatchObject({ event_id: 'SIP1001:success', resource_id: 'SIP1001', event_type: 'success', content_type: FORM, status: 'pending' });
    expect(Buffer.from(rows[0]!.body).toString()).toBe(body); // stored raw, byte for byte

    // The same order's other outcome is another notification.
    const failed = await post(
      'paytr',
      paytrBody(
        { merchant_oid: 'SIP1001', status: 'failed', total_amount: '0' },
        { failed_reason_code: '6', failed_reason_msg: 'Müşteri ödeme yapmaktan vazgeçti' },
      ),
      FORM,
    );
    expect(failed.text).toBe('OK');
    expect(await countRows(t.db)).toBe(2);
  });

  it('a PayTR notification with a bad hash is refused with a coded JSON error and stores nothing', async () => {
    const body = paytrBody({ merchant_oid: 'SIP2001', status: 'success', total_amount: '3456' }).replace('total_amount=3456', 'total_amount=9999');
    const res = await post('paytr', body, FORM);
    expect(res.status).toBe(401);
    expect(res.type).toMatch(/^application\/json/);
    expect(JSON.parse(res.text)).toMatchObject({ error: 'SIGNATURE_INVALID' });
    const unsigned = await post('paytr', 'merchant_oid=SIP2002&status=success&total_amount=1', FORM);
    expect(JSON.parse(unsigned.text)).toMatchObject({ error: 'SIGNATURE_MISSING' });
    expect(await countRows(t.db)).toBe(0);
  });

  it('refuses a merchant_oid whose percent-decoded bytes are not UTF-8 (x%FF and x%FE would both read "x\\uFFFD")', async () => {
    // Signed over the value as a form parser decodes it, so the request reaches the id.
    const signed = paytrBody({ merchant_oid: 'SIP\uFFFD', status: 'success', total_amount: '3456' });
    for (const bytes of ['%FF', '%FE', '%C3']) {
      const res = await post('paytr', signed.replace('%EF%BF%BD', bytes), FORM);
      expect(res.status, res.text).toBe(400);
      expect(JSON.parse(res.text)).toMatchObject({ error: 'EVENT_ID_INVALID' });
    }
    expect(await countRows(t.db)).toBe(0);
    // A U+FFFD sent as its own UTF-8 bytes is a real character and fine.
    expect(await post('paytr', signed, FORM)).toMatchObject({ status: 200, text: 'OK' });
    expect(await countRows(t.db)).toBe(1);
  });

  it('iyzico V3 notifications verify in each documented format; a retry is a duplicate', async () => {
    const direct = {
      iyziEventTime: 1764844800000,
      iyziEventType: 'THREE_DS_AUTH',
      iyziReferenceCode: 'ref-1',
      paymentId: 22416035,
      paymentConversationId: 'conv-1001',
      status: 'SUCCESS',
      merchantId: MERCHANT_ID,
    };
    const directSig = iyzicoSign(IYZICO_KEY + 'THREE_DS_AUTH' + '22416035' + 'conv-1001' + 'SUCCESS');
    const first = await post('iyzico', JSON.stringify(direct), 'application/json', { 'X-IYZ-SIGNATURE-V3': directSig });
    expect(first).toMatchObject({ status: 200, text: '{"status":"accepted"}' });
    // iyziReferenceCode is not signed: a copy with another one is still the same notification.
    const copy = await post('iyzico', JSON.stringify({ ...direct, iyziReferenceCode: 'ref-1b' }), 'application/json', { 'X-IYZ-SIGNATURE-V3': directSig });
    expect(copy.status).toBe(200);
    expect(JSON.parse(copy.text)).toEqual({ status: 'duplicate', previous: { status: 'pending', result_ref: null } });

    const hpp = {
      iyziEventTime: 1764844800000,
      iyziEventType: 'CHECKOUT_FORM_AUTH',
      iyziReferenceCode: 'ref-2',
      iyziPaymentId: 22416036,
      token: 'tok-1',
      paymentConversationId: 'conv-1002',
      status: 'SUCCESS',
    };
    const hppRes = await post('iyzico', JSON.stringify(hpp), 'application/json', {
      'X-IYZ-SIGNATURE-V3': iyzicoSign(IYZICO_KEY + 'CHECKOUT_FORM_AUTH' + '22416036' + 'tok-1' + 'conv-1002' + 'SUCCESS'),
    });
    expect(hppRes.status).toBe(200);

    const sub = {
      orderReferenceCode: 'ord-1',
      customerReferenceCode: 'cus-1',
      subscriptionReferenceCode: 'sub-1',
      iyziReferenceCode: 'ref-3',
      iyziEventType: 'subscription.order.success',
      iyziEventTime: 1764844800000,
    };
    const subRes = await post('iyzico', JSON.stringify(sub), 'application/json', {
      'X-IYZ-SIGNATURE-V3': iyzicoSign(MERCHANT_ID + IYZICO_KEY + 'subscription.order.success' + 'sub-1' + 'ord-1' + 'cus-1'),
    });
    expect(subRes.status).toBe(200);

    const bad = await post('iyzico', JSON.stringify({ ...direct, status: 'FAILURE' }), 'application/json', { 'X-IYZ-SIGNATURE-V3': directSig });
    expect(bad.status).toBe(401);

    const { rows } = await t.db.query<{ event_id: string; resource_id: string; event_type: string; occurred_at: Date }>(
      'SELECT event_id, resource_id, event_type, occurred_at FROM inbox_deliveries ORDER BY event_id COLLATE "C"',
    );
    expect(rows.map((r) => [r.event_id, r.resource_id, r.event_type])).toEqual([
      ['CHECKOUT_FORM_AUTH:tok-1:SUCCESS', 'conv-1002', 'CHECKOUT_FORM_AUTH'],
      ['THREE_DS_AUTH:22416035:SUCCESS', 'conv-1001', 'THREE_DS_AUTH'],
      ['subscription.order.success:sub-1:ord-1', 'sub-1', 'subscription.order.success'],
    ]);
    expect(rows[0]!.occurred_at.toISOString()).toBe('2025-12-04T10:40:00.000Z');
  });

  it('a generic source: form template with a named secret, any key of a rotation, composite key, its own answer', async () => {
    const sign = (key: string, order: string, state: string) => createHmac('sha512', key).update(`${order}:${state}:p3pp3r`).digest('hex');
    const body = `order=A%3A1&state=paid&sig=${sign('k-new', 'A:1', 'paid')}`;
    const res = await post('formhook', body, FORM);
    expect(res).toEqual({ status: 202, type: 'text/plain; charset=utf-8', text: 'alındı' });
    expect((await post('formhook', `state=paid&order=A%3A1&sig=${sign('k-old', 'A:1', 'paid')}`, FORM)).status).toBe(202);
    expect(await countRows(t.db)).toBe(1);
    const { rows } = await t.db.query<{ event_id: string }>('SELECT event_id FROM inbox_deliveries');
    expect(rows[0]!.event_id).toBe('A\\:1:paid');
    const wrong = await post('formhook', `order=A&state=paid&sig=${sign('k-other', 'A', 'paid')}`, FORM);
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.text)).toMatchObject({ error: 'SIGNATURE_INVALID' });
  });

  it('an outbox endpoint refuses a body signature or a named secret it could not sign with', async () => {
    const { endpoints } = outboxParts(testContext(t.db, parseConfig({ sending: { allow_networks: ['127.0.0.0/8'] } })));
    const base = { url: 'http://127.0.0.1:9/hook', scheme: 'hmac' };
    await expect(endpoints.create(t.db, { ...base, hmac: { signature: 'form:hash', signed_payload: '{form:a}' } })).rejects.toThrow(/signs in a header/);
    await expect(endpoints.create(t.db, { ...base, hmac: { signature_header: 'X-S', signed_payload: '{body}{secret:salt}' } })).rejects.toThrow(/one secret/);
    // The iyzico header as the generic scheme makes it (the simulator's way) is fine.
    const { endpoint } = await endpoints.create(t.db, {
      ...base,
      hmac: { signature_header: 'X-IYZ-SIGNATURE-V3', signed_payload: '{secret:key}{body:iyziEventType}{body:paymentId}' },
    });
    await endpoints.remove(t.db, endpoint.id);
  });

  it('joins composite parts unambiguously', () => {
    expect(joinIdParts(['A:1', 'B'])).not.toBe(joinIdParts(['A', '1:B']));
    expect(joinIdParts(['A\\', ':B'])).not.toBe(joinIdParts(['A\\:', 'B']));
    expect(joinIdParts(['SIP1', 'success'])).toBe('SIP1:success');
  });
});
