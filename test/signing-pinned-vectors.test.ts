import { describe, expect, it } from 'vitest';
import { isTekilError } from '../src/errors.js';
import { createScheme } from '../src/signing/index.js';

/**
 * Pinned vectors: requests kept as fixed bytes, from the providers' own material, that tekil's
 * verifiers must accept as they are and refuse with any signed byte changed. Nothing here is computed
 * by tekil's signers; a change to a verifier that breaks a provider's real requests fails here first.
 */

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (isTekilError(err)) return err.code;
    throw err;
  }
}

/** The same bytes with the one at `index` changed (to another printable character). */
function changedAt(bytes: Buffer, index: number): Buffer {
  const copy = Buffer.from(bytes);
  copy[index] = copy[index] === 0x30 ? 0x31 : 0x30;
  return copy;
}

/** Indexes of `value`'s bytes inside `bytes` (its first occurrence; ASCII text). */
function rangeOf(bytes: Buffer, value: string): number[] {
  const at = bytes.indexOf(value);
  expect(at, `"${value}" in the vector`).toBeGreaterThanOrEqual(0);
  return Array.from({ length: Buffer.byteLength(value) }, (_, i) => at + i);
}

// iyzico's two published samples of X-Iyz-Signature-V3, from its official PHP library
// (github.com/iyzico/iyzipay-php, samples/webhook_Signature_Validation.php): the payloads and headers
// exactly as given there, with the sandbox secret key they were signed with.
const IYZICO_SANDBOX_SECRET = 'sandbox-UuLnD7wZa0a3DmytfIrwHQqAMfqCNJrs';
const iyzicoSamples = [
  {
    name: 'checkout form (CO Form and Pay with iyzico)',
    body: '{"paymentConversationId":"conversationId","merchantId":3382172,"token":"e828c62d-fd12-4b1a-ad5a-380f15fe6596","status":"SUCCESS","iyziReferenceCode":"77e1635c-6b39-475a-8b7b-ca15ad0cd4ac","iyziEventType":"CHECKOUT_FORM_AUTH","iyziEventTime":1721825036103,"iyziPaymentId":22483975}',
    signature: '4031c575763486a2d2bf3f7ace0baebfcd6bed65393ab4df3fe80c00d5fd6878',
    signed: [
      '"iyziEventType":"CHECKOUT_FORM_AUTH"',
      '"iyziPaymentId":22483975',
      '"token":"e828c62d-fd12-4b1a-ad5a-380f15fe6596"',
      '"paymentConversationId":"conversationId"',
      '"status":"SUCCESS"',
    ],
  },
  {
    name: 'direct payment via API',
    body: '{"paymentConversationId":"conversationId","merchantId":3382172,"paymentId":22484059,"status":"SUCCESS","iyziReferenceCode":"a9af8e6b-4401-4928-b6b8-40419aaa3d0f","iyziEventType":"API_AUTH","iyziEventTime":1721825828467,"iyziPaymentId":22484059}',
    signature: '92c7a72b7741bc83eb696066605c894778c87297b2c88d6037670666230e18ae',
    signed: ['"iyziEventType":"API_AUTH"', '"paymentId":22484059', '"paymentConversationId":"conversationId"', '"status":"SUCCESS"'],
  },
] as const;

describe("pinned vectors: iyzico's published samples (iyzipay-php)", () => {
  const scheme = createScheme('iyzico');
  const verify = (body: Buffer, signature: string, secret = IYZICO_SANDBOX_SECRET) =>
    scheme.verify({ body, headers: { 'x-iyz-signature-v3': signature, 'content-type': 'application/json' }, secrets: [secret], toleranceSec: 300 });

  for (const sample of iyzicoSamples) {
    it(`${sample.name}: accepted as published; refused with a signed byte, a signature byte or the key changed`, () => {
      const body = Buffer.from(sample.body, 'utf8');
      expect(() => verify(body, sample.signature)).not.toThrow();
      // Every byte of every signed value (the payment id, the token, the conversation id, the status, the event type).
      for (const field of sample.signed) {
        const valueStart = field.indexOf(':') + 1;
        for (const index of rangeOf(body, field).filter((_, i) => i >= valueStart && field[i] !== '"')) {
          expect(
            code(() => verify(changedAt(body, index), sample.signature)),
            `byte ${index} of ${field}`,
          ).toMatch(/^SIGNATURE_(INVALID|MALFORMED)$/);
        }
      }
      const signature = Buffer.from(sample.signature);
      for (let i = 0; i < signature.length; i++) {
        expect(
          code(() => verify(body, changedAt(signature, i).toString())),
          `signature byte ${i}`,
        ).toBe('SIGNATURE_INVALID');
      }
      expect(code(() => verify(body, sample.signature, `${IYZICO_SANDBOX_SECRET}x`))).toBe('SIGNATURE_INVALID');
      // iyziReferenceCode is not signed (so it is not part of tekil's delivery id either).
      expect(() => verify(Buffer.from(sample.body.replace(/"iyziReferenceCode":"[^"]+"/, '"iyziReferenceCode":"other"')), sample.signature)).not.toThrow();
    });
  }
});

// PayTR's notification ("Bildirim URL", iFrame API step 2): the POST fields its documentation lists,
// and its formula, hash = base64(HMAC-SHA256(merchant_oid + merchant_salt + status + total_amount, merchant_key)).
// PayTR publishes no key of its own, so the key and salt are these; the hash was computed once with
//   printf '%s' 'IN20261207000001paytr_salt_dokumansuccess10000' | openssl dgst -sha256 -hmac paytr_key_dokuman -binary | base64
const PAYTR_KEY = 'paytr_key_dokuman';
const PAYTR_SALT = 'paytr_salt_dokuman';
const PAYTR_FORM =
  'merchant_oid=IN20261207000001&status=success&total_amount=10000&hash=jengJdlc0HtcdmIjXusgLKjUEgdLy0owcU2biBo1JbE%3D&failed_reason_code=&failed_reason_msg=&test_mode=1&payment_type=card&currency=TL&payment_amount=10000';

describe('pinned vectors: a PayTR notification as its documentation describes it', () => {
  const scheme = createScheme('paytr');
  const verify = (body: Buffer, salt = PAYTR_SALT) =>
    scheme.verify({
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      secrets: [PAYTR_KEY],
      namedSecrets: { salt },
      toleranceSec: 0,
    });

  it('is accepted as it stands; a changed byte of merchant_oid, status, total_amount or hash, or another salt, is refused', () => {
    const body = Buffer.from(PAYTR_FORM);
    expect(() => verify(body)).not.toThrow();
    for (const value of ['merchant_oid=IN20261207000001', 'status=success', 'total_amount=10000', 'hash=jengJdlc0HtcdmIjXusgLKjUEgdLy0owcU2biBo1JbE%3D']) {
      const name = value.split('=')[0]!;
      for (const index of rangeOf(body, value).slice(name.length + 1)) {
        expect(
          code(() => verify(changedAt(body, index))),
          `byte ${index} of ${value}`,
        ).toMatch(/^SIGNATURE_(INVALID|MALFORMED)$/);
      }
    }
    expect(code(() => verify(body, 'paytr_salt_other'))).toBe('SIGNATURE_INVALID');
    // payment_amount is not signed (total_amount is what PayTR signs).
    expect(() => verify(Buffer.from(PAYTR_FORM.replace('payment_amount=10000', 'payment_amount=10001')))).not.toThrow();
  });
});

// Paymos during a secret rotation (the first article: "imza başlığı tek v1 yerine iki v1 değeri
// taşır"): X-Webhook-Signature t=<unix seconds>,v1=<hex>,v1=<hex>, each an HMAC-SHA256 over
// "<t>.<raw body>" keyed with a whole whsec_ string, the old secret's first. Computed once with
//   printf '%s' "$T.$BODY" | openssl dgst -sha256 -hmac whsec_paymos_eski_anahtar   (then _yeni_)
const PAYMOS_OLD = 'whsec_paymos_eski_anahtar';
const PAYMOS_NEW = 'whsec_paymos_yeni_anahtar';
const PAYMOS_BODY =
  '{"event_id":"evt_01jz8q5v3k9m2x4t6w8y0a1b3c","event_type":"invoice.paid","version":"2024-06-01","occurred_at":"2026-12-07T12:00:00Z","data":{"invoice_id":"inv_7f3a","status":"paid","amount":"125.00","paid_amount":"125.00","currency":"EUR"}}';
const PAYMOS_HEADER =
  't=1765108800,v1=c3880504325248fec84e07c1933dd978ac250d4ea599f6ed2abc2f3d6ad2e103,v1=744c4a56ab97d28eba88817e14f98319575921240da8e4624aed7b8a9e802826';

describe('pinned vectors: a Paymos header with two v1 values', () => {
  const scheme = createScheme('paymos');
  const verify = (body: Buffer, header: string, secrets: string[]) =>
    scheme.verify({ body, headers: { 'x-webhook-signature': header, 'x-webhook-id': 'evt_01jz8q5v3k9m2x4t6w8y0a1b3c' }, secrets, toleranceSec: 0 });

  it('is accepted by a receiver holding either secret (v1 read as a list); refused with any body byte, the timestamp or both signatures changed', () => {
    const body = Buffer.from(PAYMOS_BODY);
    expect(() => verify(body, PAYMOS_HEADER, [PAYMOS_OLD])).not.toThrow();
    expect(() => verify(body, PAYMOS_HEADER, [PAYMOS_NEW])).not.toThrow();
    expect(() => verify(body, PAYMOS_HEADER, [PAYMOS_NEW, PAYMOS_OLD])).not.toThrow();
    expect(code(() => verify(body, PAYMOS_HEADER, ['whsec_paymos_baska_anahtar']))).toBe('SIGNATURE_INVALID');
    for (let i = 0; i < body.length; i++) {
      expect(
        code(() => verify(changedAt(body, i), PAYMOS_HEADER, [PAYMOS_OLD, PAYMOS_NEW])),
        `body byte ${i}`,
      ).toBe('SIGNATURE_INVALID');
    }
    expect(code(() => verify(body, PAYMOS_HEADER.replace('t=1765108800', 't=1765108801'), [PAYMOS_OLD, PAYMOS_NEW]))).toBe('SIGNATURE_INVALID');
    // Only the second value valid for the new secret: the verifier must look past the first.
    const [, first, second] = PAYMOS_HEADER.split(',');
    const broken = (v: string) => `v1=${changedAt(Buffer.from(v.slice(3)), 5).toString()}`;
    expect(() => verify(body, `t=1765108800,${broken(first!)},${second}`, [PAYMOS_NEW])).not.toThrow();
    expect(code(() => verify(body, `t=1765108800,${first},${broken(second!)}`, [PAYMOS_NEW]))).toBe('SIGNATURE_INVALID');
    expect(code(() => verify(body, `t=1765108800,${broken(first!)},${broken(second!)}`, [PAYMOS_OLD, PAYMOS_NEW]))).toBe('SIGNATURE_INVALID');
  });
});
