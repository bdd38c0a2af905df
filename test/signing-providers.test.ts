import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createScheme } from '../src/signing/index.js';
import { isTekilError } from '../src/errors.js';

/**
 * Conformance vectors for the `paytr` and `iyzico` presets. Each expected signature is computed here
 * from the provider's documented formula, step by step with node:crypto, never with tekil's signer;
 * a few are also kept as literal values (computed once with `openssl dgst -sha256 -hmac`).
 */

// PayTR, "Bildirim URL" sample code (iFrame API and Direkt API, step 2):
//   $hash = base64_encode(hash_hmac('sha256', $post['merchant_oid'].$merchant_salt.$post['status'].$post['total_amount'], $merchant_key, true));
const MERCHANT_KEY = 'KEYdemo123';
const MERCHANT_SALT = 'SALTdemo456';
function paytrDocumentedHash(post: { merchant_oid: string; status: string; total_amount: string }): string {
  const text = post.merchant_oid + MERCHANT_SALT + post.status + post.total_amount;
  return createHmac('sha256', MERCHANT_KEY).update(text, 'utf8').digest('base64');
}
function paytrForm(fields: Record<string, string>): Buffer {
  return Buffer.from(new URLSearchParams(fields).toString());
}

// iyzico, "Webhook" (X-IYZ-SIGNATURE-V3): hex HMAC-SHA256 keyed with the secret key over
//   direct:       secretKey + iyziEventType + paymentId + paymentConversationId + status
//   HPP:          secretKey + iyziEventType + iyziPaymentId + token + paymentConversationId + status
//   subscription: merchantId + secretKey + iyziEventType + subscriptionReferenceCode + orderReferenceCode + customerReferenceCode
const SECRET_KEY = 'sandbox-secret-demo';
const MERCHANT_ID = '654321';
const hexHmac = (text: string) => createHmac('sha256', SECRET_KEY).update(text, 'utf8').digest('hex');

const direct = {
  iyziEventTime: 1764844800000,
  iyziEventType: 'THREE_DS_AUTH',
  iyziReferenceCode: 'ref-1',
  paymentId: 22416035,
  paymentConversationId: 'conv-1001',
  status: 'SUCCESS',
};
const hpp = {
  iyziEventTime: 1764844800000,
  iyziEventType: 'CHECKOUT_FORM_AUTH',
  iyziReferenceCode: 'ref-2',
  iyziPaymentId: 22416036,
  token: 'f2a29cc5-90e4-4f6e-b05b-4e1e6902f003',
  paymentConversationId: 'conv-1002',
  status: 'SUCCESS',
};
const subscription = {
  orderReferenceCode: 'ae5fcbf8-ord-1',
  customerReferenceCode: 'ff4052ca-cus-1',
  subscriptionReferenceCode: 'ea0362e2-sub-1',
  iyziReferenceCode: 'ref-3',
  iyziEventType: 'subscription.order.success',
  iyziEventTime: 1764844800000,
};

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (isTekilError(err)) return err.code;
    throw err;
  }
}

describe('paytr preset (form body, hash in the body)', () => {
  const scheme = createScheme('paytr');
  const named = { salt: MERCHANT_SALT };
  const verify = (body: Buffer) =>
    scheme.verify({ body, headers: { 'content-type': 'application/x-www-form-urlencoded' }, secrets: [MERCHANT_KEY], namedSecrets: named, toleranceSec: 300 });

  it('accepts the documented hash, computed step by step, and a kept literal value', () => {
    const post = { merchant_oid: 'SIP20261204001', status: 'success', total_amount: '3456' };
    const hash = paytrDocumentedHash(post);
    expect(hash).toBe('vm6Xq/Pt/FKfngX7bL/uyshXWHeMnf4IsTuJRwsS7Io=');
    expect(() => verify(paytrForm({ ...post, hash, payment_type: 'card', currency: 'TL', payment_amount: '3456', test_mode: '1' }))).not.toThrow();
    // A failed payment: total_amount 0 and failed_reason_* fields, which are not signed.
    const failed = { merchant_oid: 'SIP20261204002', status: 'failed', total_amount: '0' };
    expect(paytrDocumentedHash(failed)).toBe('YhmordqLiKPzzqHShd8VSVjV6L8mURx8obfvesGdDQY=');
    expect(() =>
      verify(paytrForm({ ...failed, hash: paytrDocumentedHash(failed), failed_reason_code: '2', failed_reason_msg: 'Ödeme onaylanmadı' })),
    ).not.toThrow();
  });

  it('refuses a changed amount or status, a wrong salt, a missing or repeated hash', () => {
    const post = { merchant_oid: 'SIP20261204001', status: 'success', total_amount: '3456' };
    const hash = paytrDocumentedHash(post);
    expect(code(() => verify(paytrForm({ ...post, total_amount: '345600', hash })))).toBe('SIGNATURE_INVALID');
    expect(code(() => verify(paytrForm({ ...post, status: 'failed', hash })))).toBe('SIGNATURE_INVALID');
    expect(
      code(() => scheme.verify({ body: paytrForm({ ...post, hash }), headers: {}, secrets: [MERCHANT_KEY], namedSecrets: { salt: 'other' }, toleranceSec: 0 })),
    ).toBe('SIGNATURE_INVALID');
    expect(code(() => verify(paytrForm(post)))).toBe('SIGNATURE_MISSING');
    expect(code(() => verify(Buffer.from(`${paytrForm({ ...post, hash }).toString()}&hash=${encodeURIComponent(hash)}`)))).toBe('SIGNATURE_MISSING');
    // A signed field sent twice is ambiguous (parsers disagree on which copy wins): refused.
    expect(code(() => verify(Buffer.from(`${paytrForm({ ...post, hash }).toString()}&status=failed`)))).toBe('SIGNATURE_MALFORMED');
    expect(code(() => verify(paytrForm({ ...post, hash: 'not base64!' })))).toBe('SIGNATURE_MALFORMED');
  });

  it('signs a body as PayTR does: the hash field added, the other bytes kept', () => {
    const form = paytrForm({ merchant_oid: 'SIP9', status: 'success', total_amount: '100' });
    const signed = scheme.signBody!({ body: form, secrets: [MERCHANT_KEY], namedSecrets: named });
    const fields = new URLSearchParams(signed.toString());
    expect(fields.get('hash')).toBe(paytrDocumentedHash({ merchant_oid: 'SIP9', status: 'success', total_amount: '100' }));
    expect(signed.toString().startsWith(form.toString())).toBe(true);
    expect(() => verify(signed)).not.toThrow();
  });

  it('configures as scheme paytr with its own block; the answer is plain OK', () => {
    const config = parseConfig({ sources: { paytr: { scheme: 'paytr', paytr: { merchant_key: MERCHANT_KEY, merchant_salt: MERCHANT_SALT } } } });
    expect(config.sources.paytr!.secrets).toEqual([MERCHANT_KEY]);
    expect(config.sources.paytr!.named_secrets).toEqual({ salt: MERCHANT_SALT });
    expect(scheme.ack).toEqual({ status: 200, content_type: 'text/plain', body: 'OK' });
    expect(() => parseConfig({ sources: { p: { scheme: 'paytr', secrets: ['x'] } } })).toThrow(/paytr/);
    expect(() => parseConfig({ sources: { p: { scheme: 'standard', secrets: ['whsec_eA=='], paytr: { merchant_key: 'a', merchant_salt: 'b' } } } })).toThrow(
      /paytr/,
    );
  });
});

describe('iyzico preset (X-IYZ-SIGNATURE-V3)', () => {
  const scheme = createScheme('iyzico');
  const verify = (payload: object, signature: string, named?: Record<string, string>) =>
    scheme.verify({
      body: Buffer.from(JSON.stringify(payload)),
      headers: { 'x-iyz-signature-v3': signature },
      secrets: [SECRET_KEY],
      ...(named ? { namedSecrets: named } : {}),
      toleranceSec: 300,
    });

  it('direct format: secretKey + iyziEventType + paymentId + paymentConversationId + status', () => {
    const expected = hexHmac(SECRET_KEY + direct.iyziEventType + String(direct.paymentId) + direct.paymentConversationId + direct.status);
    expect(expected).toBe('4073a8f3acf26b7720511a9e5b4382bb8c9bd6491d93c75807bc0350c9f37235');
    expect(() => verify(direct, expected)).not.toThrow();
    expect(code(() => verify({ ...direct, status: 'FAILURE' }, expected))).toBe('SIGNATURE_INVALID');
    expect(code(() => verify({ ...direct, paymentId: 22416034 }, expected))).toBe('SIGNATURE_INVALID');
  });

  it('hosted payment page format: secretKey + iyziEventType + iyziPaymentId + token + paymentConversationId + status', () => {
    const expected = hexHmac(SECRET_KEY + hpp.iyziEventType + String(hpp.iyziPaymentId) + hpp.token + hpp.paymentConversationId + hpp.status);
    expect(expected).toBe('db24f074f44c6ad487c87c0cc8d64033287178625fd83a85b67dda374af4b3a6');
    expect(() => verify(hpp, expected)).not.toThrow();
    expect(() => verify(hpp, expected.toUpperCase())).not.toThrow();
    expect(code(() => verify({ ...hpp, token: 'other' }, expected))).toBe('SIGNATURE_INVALID');
  });

  it('subscription format: merchantId + secretKey + iyziEventType + subscriptionReferenceCode + orderReferenceCode + customerReferenceCode', () => {
    const expected = hexHmac(
      MERCHANT_ID +
        SECRET_KEY +
        subscription.iyziEventType +
        subscription.subscriptionReferenceCode +
        subscription.orderReferenceCode +
        subscription.customerReferenceCode,
    );
    expect(expected).toBe('68b557079132d0987b7df933d5c7b785bc68340be17e5163e41968afd6273862');
    expect(() => verify(subscription, expected, { merchant_id: MERCHANT_ID })).not.toThrow();
    expect(() => verify({ ...subscription, merchantId: MERCHANT_ID }, expected)).not.toThrow();
    expect(code(() => verify(subscription, expected, { merchant_id: '999' }))).toBe('SIGNATURE_INVALID');
    expect(code(() => verify(subscription, expected))).toBe('CONFIG_INVALID');
  });

  it('refuses a missing or non-hex header, a body that is not JSON, and a missing signed field', () => {
    expect(code(() => scheme.verify({ body: Buffer.from(JSON.stringify(direct)), headers: {}, secrets: [SECRET_KEY], toleranceSec: 0 }))).toBe(
      'SIGNATURE_MISSING',
    );
    expect(code(() => verify(direct, 'zz'))).toBe('SIGNATURE_MALFORMED');
    expect(code(() => scheme.verify({ body: Buffer.from('a=1'), headers: { 'x-iyz-signature-v3': 'ab' }, secrets: [SECRET_KEY], toleranceSec: 0 }))).toBe(
      'SIGNATURE_MALFORMED',
    );
    const { status: _status, ...noStatus } = direct;
    expect(code(() => verify(noStatus, 'ab'))).toBe('SIGNATURE_MALFORMED');
  });

  it('signs what it verifies (the three formats)', () => {
    for (const [payload, named] of [
      [direct, undefined],
      [hpp, undefined],
      [subscription, { merchant_id: MERCHANT_ID }],
    ] as const) {
      const body = Buffer.from(JSON.stringify(payload));
      const headers = scheme.sign({ body, secrets: [SECRET_KEY], ...(named ? { namedSecrets: named } : {}) });
      expect(() =>
        scheme.verify({
          body,
          headers: { 'x-iyz-signature-v3': headers['X-IYZ-SIGNATURE-V3']! },
          secrets: [SECRET_KEY],
          ...(named ? { namedSecrets: named } : {}),
          toleranceSec: 0,
        }),
      ).not.toThrow();
    }
  });

  it('configures as scheme iyzico with its own block', () => {
    const config = parseConfig({ sources: { iyz: { scheme: 'iyzico', iyzico: { secret_key: SECRET_KEY, merchant_id: MERCHANT_ID } } } });
    expect(config.sources.iyz!.secrets).toEqual([SECRET_KEY]);
    expect(config.sources.iyz!.named_secrets).toEqual({ merchant_id: MERCHANT_ID });
  });
});

describe('the generic hmac scheme with field templates', () => {
  it('signs a template of form fields and named secrets, read from a body field, in hex or base64, with any algorithm', () => {
    for (const [algorithm, encoding] of [
      ['sha256', 'base64'],
      ['sha512', 'hex'],
      ['sha1', 'hex'],
    ] as const) {
      const scheme = createScheme('hmac', {
        algorithm,
        encoding,
        signature: 'form:sig',
        signed_payload: '{form:order}|{secret:salt}|{form:amount}',
        prefix: '',
        secret_encoding: 'utf8',
      });
      const expected = createHmac(algorithm, 'k').update('o-1|pepper|9.90').digest(encoding);
      const body = Buffer.from(`order=o-1&amount=9.90&sig=${encodeURIComponent(expected)}`);
      expect(() => scheme.verify({ body, headers: {}, secrets: ['k'], namedSecrets: { salt: 'pepper' }, toleranceSec: 0 })).not.toThrow();
    }
  });

  it('reads a signature from a JSON body field and signs JSON fields, numbers as written', () => {
    const scheme = createScheme('hmac', {
      algorithm: 'sha256',
      encoding: 'hex',
      signature: 'body:signature',
      signed_payload: '{body:id}.{body:data.amount}',
      prefix: '',
      secret_encoding: 'utf8',
    });
    const expected = createHmac('sha256', 'k').update('17960923835832100001.10.50').digest('hex');
    const body = Buffer.from(`{"id":17960923835832100001,"data":{"amount":10.50},"signature":"${expected}"}`);
    expect(() => scheme.verify({ body, headers: {}, secrets: ['k'], toleranceSec: 0 })).not.toThrow();
  });

  it('takes an ack of any 2xx with a media type, and nothing else', () => {
    const source = (ack: unknown) => ({ sources: { s: { scheme: 'standard', secrets: ['whsec_eA=='], ack } } });
    expect(parseConfig(source({ body: 'OK' })).sources.s!.ack).toEqual({ status: 200, content_type: 'text/plain', body: 'OK' });
    expect(parseConfig(source({ status: 202, content_type: 'application/json', body: '{}' })).sources.s!.ack!.status).toBe(202);
    expect(() => parseConfig(source({ status: 302, body: 'OK' }))).toThrow(/ack/);
    expect(() => parseConfig(source({ content_type: 'OK', body: 'OK' }))).toThrow(/media type/);
  });

  it('refuses templates that cannot work', () => {
    expect(() => parseConfig({ sources: { s: { scheme: 'hmac', secrets: ['k'], hmac: { signature: 'form:sig', signed_payload: '{body}' } } } })).toThrow(
      /\{body\}/,
    );
    expect(() =>
      parseConfig({ sources: { s: { scheme: 'hmac', secrets: ['k'], hmac: { signature_header: 'X-S', signed_payload: '{form:a}{secret:salt}' } } } }),
    ).toThrow(/named_secrets/);
    expect(() => parseConfig({ sources: { s: { scheme: 'hmac', secrets: ['k'], hmac: { signed_payload: '{body}' } } } })).toThrow(/signature_header/);
    expect(() => parseConfig({ sources: { s: { scheme: 'hmac', secrets: ['k'], hmac: { signature_header: 'X-S', signed_payload: '{nope:x}' } } } })).toThrow(
      /placeholder/,
    );
  });
});
