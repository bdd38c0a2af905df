import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAmount, sameAmount } from '../src/lookup/amount.js';
import { iyzicoAuthorization, iyzicoRetrievePayment } from '../src/lookup/iyzico.js';
import { paytrStatusToken } from '../src/lookup/paytr.js';
import { startFakeIyzico, type PaymentApi } from './helpers/payment-apis.js';

/** iyzico's official Node library (iyzipay), untyped: only what this test calls. */
interface IyzipayClient {
  payment: { retrieve(request: Record<string, string>, cb: (err: unknown, result: Record<string, unknown>) => void): void };
}
const require = createRequire(import.meta.url);
const Iyzipay = require('iyzipay') as new (options: { apiKey: string; secretKey: string; uri: string }) => IyzipayClient;
const iyzipayUtils = require('iyzipay/lib/utils') as {
  generateAuthorizationHeaderV2(name: string, apiKey: string, separator: string, secretKey: string, uri: string, body: unknown, random: string): string;
};

const API_KEY = 'sandbox-afXhZPW0MQlE4dCUUlHcEopnMBgXnAZI';
const SECRET_KEY = 'sandbox-wbwpzKIiplZxI3hh5ALI4FJyAcZKL6kq';

/**
 * The lookups' request formats against the providers' own words: iyzico's IYZWSv2 header as its
 * official library makes it (and the fake iyzico accepting that library's own requests, so the fake is
 * shaped like iyzico), PayTR's paytr_token from its documented sample, amounts as exact decimals.
 */
describe('payment lookups: interop', () => {
  let iyzico: PaymentApi;
  beforeAll(async () => {
    iyzico = await startFakeIyzico({
      apiKey: API_KEY,
      secretKey: SECRET_KEY,
      payments: [{ paymentId: '22416031', conversationId: 'order-1', paidPrice: 1.2, currency: 'TRY', paymentStatus: 'SUCCESS' }],
    });
  });
  afterAll(async () => {
    await iyzico?.close();
  });

  it("iyzico: tekil's IYZWSv2 header is the one iyzipay makes for the same request", () => {
    const body = { locale: 'tr', conversationId: '22416031', paymentId: '22416031' };
    const ours = iyzicoAuthorization(API_KEY, SECRET_KEY, '123456789', '/payment/detail', JSON.stringify(body));
    const theirs = iyzipayUtils.generateAuthorizationHeaderV2('IYZWSv2', API_KEY, ':', SECRET_KEY, '/payment/detail', body, '123456789');
    expect(ours).toBe(theirs);
  });

  it("iyzico: the fake accepts iyzipay's own retrieve, and tekil's, with the same answer", async () => {
    const client = new Iyzipay({ apiKey: API_KEY, secretKey: SECRET_KEY, uri: iyzico.url });
    const viaLibrary = await new Promise<Record<string, unknown>>((resolve, reject) =>
      client.payment.retrieve({ locale: 'tr', conversationId: 'c1', paymentId: '22416031' }, (err, result) => (err ? reject(err) : resolve(result))),
    );
    expect(viaLibrary).toMatchObject({ status: 'success', paymentStatus: 'SUCCESS', paidPrice: 1.2 });
    const viaTekil = await iyzicoRetrievePayment(
      { provider: 'iyzico', apiBase: iyzico.url, apiKey: API_KEY, secretKey: SECRET_KEY },
      { paymentId: '22416031' },
      5000,
    );
    expect(viaTekil).toEqual({ status: 'SUCCESS', amount: '1.2', currency: 'TRY', id: '22416031' });
    // A wrong secret is refused by the fake as iyzico refuses it: tekil reports a failed lookup.
    await expect(
      iyzicoRetrievePayment({ provider: 'iyzico', apiBase: iyzico.url, apiKey: API_KEY, secretKey: 'wrong' }, { paymentId: '22416031' }, 5000),
    ).rejects.toMatchObject({ code: 'PAYMENT_LOOKUP_FAILED' });
  });

  it("PayTR: paytr_token is base64(HMAC-SHA256(merchant_key, merchant_id + merchant_oid + merchant_salt)), as PayTR's sample computes it", () => {
    // The same formula in another implementation (Python's hmac, as PayTR's Python sample does it), pinned.
    expect(paytrStatusToken('100200', 'SP1001', 'salt', 'key')).toBe('t2aNThAp4xAaMQVBEqtKp76ooFDkFxYns6LVcczb+/M=');
  });

  it('amounts compare as exact decimals in any provider notation', () => {
    const eq = (a: string, am: number, b: string) => sameAmount(parseAmount(a, am)!, parseAmount(b)!);
    expect(eq('1080', 2, '10,8')).toBe(true);
    expect(eq('4990', 2, '49.90')).toBe(true);
    expect(eq('75.5', 0, '75.50')).toBe(true);
    expect(eq('0.1', 0, '0.10000000000000001')).toBe(false);
    expect(eq('4990', 2, '49.91')).toBe(false);
    expect(parseAmount('1.000,50')).toBeUndefined();
    expect(parseAmount('abc')).toBeUndefined();
  });
});
