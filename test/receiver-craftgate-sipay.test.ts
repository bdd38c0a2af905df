import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseConfig } from '../src/config/index.js';
import { createScheme } from '../src/signing/index.js';
import { decryptSipayToken, encryptSipayToken } from '../src/signing/sipay.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { countRows, receiverApp } from './helpers/receiver.js';

/**
 * Craftgate and Sipay notifications as fixed bytes, checked by the schemes and through the real
 * HTTP receiver on the store under test: each valid vector passes, the same bytes with one changed
 * byte are refused and leave no row.
 */

// Craftgate's own sample (craftgate-node-client samples/hook/VerifyWebhook.js): the merchant's hook
// key, the four signed fields, and the signature Craftgate's client accepts for them.
const CRAFTGATE_KEY = 'Aoh7tReTybO6wOjBmOJFFsOR53SBojEp';
const CRAFTGATE_SIGNATURE = '0wRB5XqWJxwwPbn5Z9TcbHh8EGYFufSYTsRMB74N094=';
const CRAFTGATE_BODY =
  '{"eventType":"API_VERIFY_AND_AUTH","eventTime":"2022-08-26T16:40:21.395655","eventTimestamp":1661521221,"status":"SUCCESS","payloadId":"584"}';

// A Sipay token made outside tekil, with the openssl command line, exactly as Sipay's PHP SDK
// (Sipay\Utils\HashKey::generateHashKey) makes one: iv 9bf1a5fd4d3ab8e1, salt 4c1d,
// key = first 32 chars of sha256_hex(sha1_hex(app_secret) + salt), AES-256-CBC, base64, '/' → '__'.
//   printf %s 'Completed|100.50|INV-20261207-0001|SIP-7781|TRY' | openssl enc -aes-256-cbc -K <key hex> -iv <iv hex> -base64 -A
const SIPAY_SECRET = 'b46a67571aa1e7ef5641dc3fa6f1712a';
const SIPAY_TOKEN = '9bf1a5fd4d3ab8e1:4c1d:8CT2SEteISnpktp+XewhVVxTPaSwh+LPp0q+53Au__LOqlUk54malN+ozR2nLXmaw';
const SIPAY_JSON = JSON.stringify({
  invoice_id: 'INV-20261207-0001',
  order_id: 'SIP-7781',
  status: 'Completed',
  amount: '100.50',
  currency_code: 'TRY',
  hash_key: SIPAY_TOKEN,
});
const SIPAY_FORM = new URLSearchParams({ invoice_id: 'INV-20261207-0001', order_id: 'SIP-7781', status: 'Completed', hash_key: SIPAY_TOKEN }).toString();

/** The bytes with the one at `index` changed, a digit to a digit and anything else to a letter, so the body stays readable. */
function flipByte(text: string, index: number): string {
  const bytes = Buffer.from(text);
  const digit = bytes[index]! >= 0x30 && bytes[index]! <= 0x39;
  bytes[index] = digit ? (bytes[index] === 0x37 ? 0x38 : 0x37) : bytes[index] === 0x41 ? 0x42 : 0x41;
  return bytes.toString('latin1');
}

describe('Craftgate and Sipay vectors', () => {
  const craftgate = createScheme('craftgate');
  const sipay = createScheme('sipay');
  const craftgateHeaders = { 'x-cg-signature-v1': CRAFTGATE_SIGNATURE };

  it("craftgate: Craftgate's sample signature verifies; every changed signed byte fails", () => {
    expect(() => craftgate.verify({ body: Buffer.from(CRAFTGATE_BODY), headers: craftgateHeaders, secrets: [CRAFTGATE_KEY], toleranceSec: 0 })).not.toThrow();
    for (const field of ['API_VERIFY_AND_AUTH', '1661521221', 'SUCCESS', '"584"']) {
      const at = CRAFTGATE_BODY.indexOf(field) + 1;
      expect(() =>
        craftgate.verify({ body: Buffer.from(flipByte(CRAFTGATE_BODY, at)), headers: craftgateHeaders, secrets: [CRAFTGATE_KEY], toleranceSec: 0 }),
      ).toThrow(expect.objectContaining({ code: 'SIGNATURE_INVALID' }));
    }
    const badSignature = { 'x-cg-signature-v1': flipByte(CRAFTGATE_SIGNATURE, 3) };
    expect(() => craftgate.verify({ body: Buffer.from(CRAFTGATE_BODY), headers: badSignature, secrets: [CRAFTGATE_KEY], toleranceSec: 0 })).toThrow(
      expect.objectContaining({ code: 'SIGNATURE_INVALID' }),
    );
    expect(() => craftgate.verify({ body: Buffer.from(CRAFTGATE_BODY), headers: {}, secrets: [CRAFTGATE_KEY], toleranceSec: 0 })).toThrow(
      expect.objectContaining({ code: 'SIGNATURE_MISSING' }),
    );
    // tekil's own signer makes Craftgate's signature for the same fields.
    expect(craftgate.sign({ body: CRAFTGATE_BODY, secrets: [CRAFTGATE_KEY] })).toEqual({ 'X-CG-SIGNATURE-V1': CRAFTGATE_SIGNATURE });
  });

  it('sipay: the pinned token decrypts to what Sipay writes; the notification verifies as JSON and as a form', () => {
    expect(decryptSipayToken(SIPAY_TOKEN, SIPAY_SECRET)).toEqual({
      status: 'Completed',
      total: '100.50',
      invoiceId: 'INV-20261207-0001',
      orderId: 'SIP-7781',
      currencyCode: 'TRY',
    });
    // tekil's encryption with the same iv and salt is the same bytes openssl made.
    expect(
      encryptSipayToken({ status: 'Completed', total: '100.50', invoiceId: 'INV-20261207-0001', orderId: 'SIP-7781', currencyCode: 'TRY' }, SIPAY_SECRET, {
        iv: '9bf1a5fd4d3ab8e1',
        salt: '4c1d',
      }),
    ).toBe(SIPAY_TOKEN);
    for (const body of [SIPAY_JSON, SIPAY_FORM]) {
      expect(() => sipay.verify({ body: Buffer.from(body), headers: {}, secrets: ['another-secret', SIPAY_SECRET], toleranceSec: 0 })).not.toThrow();
    }
  });

  it('sipay: a changed byte in the token, or a notification that says something else than its token, fails', () => {
    const at = SIPAY_JSON.indexOf(SIPAY_TOKEN) + 40;
    const verify =
      (body: string, secrets = [SIPAY_SECRET]) =>
      () =>
        sipay.verify({ body: Buffer.from(body), headers: {}, secrets, toleranceSec: 0 });
    expect(verify(flipByte(SIPAY_JSON, at))).toThrow(expect.objectContaining({ code: expect.stringMatching(/^SIGNATURE_(INVALID|MALFORMED)$/) }));
    expect(verify(SIPAY_JSON.replace('"status":"Completed"', '"status":"Completed "'))).toThrow(expect.objectContaining({ code: 'SIGNATURE_INVALID' }));
    expect(verify(SIPAY_JSON.replace('"amount":"100.50"', '"amount":"1000.50"'))).toThrow(expect.objectContaining({ code: 'SIGNATURE_INVALID' }));
    expect(verify(SIPAY_JSON.replace('INV-20261207-0001"', 'INV-20261207-0002"'))).toThrow(expect.objectContaining({ code: 'SIGNATURE_INVALID' }));
    expect(verify(SIPAY_JSON, ['wrong-secret'])).toThrow(expect.objectContaining({ code: 'SIGNATURE_INVALID' }));
    expect(verify(JSON.stringify({ invoice_id: 'x', status: 'Completed' }))).toThrow(expect.objectContaining({ code: 'SIGNATURE_MISSING' }));
    expect(verify(SIPAY_JSON.replace(SIPAY_TOKEN, 'not-a-token'))).toThrow(expect.objectContaining({ code: 'SIGNATURE_MALFORMED' }));
  });

  it('sipay: signBody writes a token the scheme accepts (what simulate and sign send)', () => {
    const unsigned = JSON.stringify({ invoice_id: 'INV-9', order_id: 'O-9', status: 'Completed', total: '12.00', currency_code: 'TRY' });
    const signed = sipay.signBody!({ body: unsigned, secrets: [SIPAY_SECRET] });
    expect(() => sipay.verify({ body: signed, headers: {}, secrets: [SIPAY_SECRET], toleranceSec: 0 })).not.toThrow();
  });
});

describe('Craftgate and Sipay through the HTTP receiver', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    t = await createTestDb();
    const config = parseConfig({
      sources: {
        craftgate: { scheme: 'craftgate', secrets: [CRAFTGATE_KEY] },
        sipay: { scheme: 'sipay', secrets: [SIPAY_SECRET] },
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
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  it('craftgate: the sample is accepted once, its copy is a duplicate, a changed byte is refused', async () => {
    const headers = { 'X-CG-SIGNATURE-V1': CRAFTGATE_SIGNATURE };
    expect(await post('craftgate', CRAFTGATE_BODY, 'application/json', headers)).toMatchObject({ status: 200, json: { status: 'accepted' } });
    expect(await post('craftgate', CRAFTGATE_BODY, 'application/json', headers)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    const forged = flipByte(CRAFTGATE_BODY, CRAFTGATE_BODY.indexOf('584'));
    expect(await post('craftgate', forged, 'application/json', headers)).toMatchObject({ status: 401, json: { error: 'SIGNATURE_INVALID' } });
    const rows = await t.db.query<{ event_id: string; resource_id: string; event_type: string }>(
      'SELECT event_id, resource_id, event_type FROM inbox_deliveries',
    );
    expect(rows.rows).toEqual([{ event_id: 'API_VERIFY_AND_AUTH:584:SUCCESS', resource_id: '584', event_type: 'API_VERIFY_AND_AUTH' }]);
  });

  it('sipay: the JSON and the form notification are accepted once each way; a changed byte is refused', async () => {
    expect(await post('sipay', SIPAY_JSON, 'application/json')).toMatchObject({ status: 200, json: { status: 'accepted' } });
    expect(await post('sipay', SIPAY_FORM, 'application/x-www-form-urlencoded')).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    const forged = SIPAY_JSON.replace('"amount":"100.50"', '"amount":"900.50"');
    expect(await post('sipay', forged, 'application/json')).toMatchObject({ status: 401, json: { error: 'SIGNATURE_INVALID' } });
    expect(await countRows(t.db, "source = 'sipay'")).toBe(1);
    const rows = await t.db.query<{ event_id: string; resource_id: string }>('SELECT event_id, resource_id FROM inbox_deliveries');
    expect(rows.rows).toEqual([{ event_id: 'INV-20261207-0001:Completed', resource_id: 'INV-20261207-0001' }]);
  });
});
