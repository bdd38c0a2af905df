import { z } from 'zod';
import { durationMs } from './units.js';

/**
 * `confirm:` on a source: before the handler or forward runs, tekil reads the payment back from the
 * provider's own API and compares its amount, currency and status with the notification's. A
 * mismatch sends the delivery to the review queue instead of producing the effect (docs/confirm.md).
 */

/** A locator into the notification (`form:total_amount`, `body:amount`); any other text is a fixed value. */
const LOCATOR = /^(body:[^\s]+|form:[^\s]+|header:[A-Za-z0-9-]+)$/;
export const isNotificationLocator = (value: string): boolean => LOCATOR.test(value);

/** Where the notification carries a value, or the one value every notification of the source has (`TRY`). */
const expectedValue = z.string().min(1);

/** An amount: where it is, and how many minor units it counts in (PayTR's `total_amount` is in kuruş: 2). */
const expectedAmount = z
  .union([
    expectedValue.transform((at) => ({ at, minor_units: 0 })),
    z.object({ at: expectedValue, minor_units: z.number().int().min(0).max(4).default(0) }).strict(),
  ])
  .refine((a) => isNotificationLocator(a.at), { message: 'expected a locator into the notification ("form:<field>", "body:<path>")' });

export const confirmExpectSchema = z
  .object({
    amount: expectedAmount.optional(),
    currency: expectedValue.optional(),
    status: expectedValue.optional(),
  })
  .strict();
export type ConfirmExpect = z.infer<typeof confirmExpectSchema>;

/** The provider's payment lookup; its credentials besides the source's own block. */
const fetchSchema = z.discriminatedUnion('provider', [
  /** PayTR's status query (Durum Sorgu); the key and salt are the source's `paytr` block. */
  z
    .object({
      provider: z.literal('paytr'),
      merchant_id: z.union([z.string().regex(/^\d+$/), z.number().int().positive()]).transform(String),
      url: z.string().url().default('https://www.paytr.com/odeme/durum-sorgu'),
    })
    .strict(),
  /** iyzico's payment retrieve (`POST /payment/detail`, IYZWSv2); the secret key is the source's `iyzico` block. */
  z
    .object({
      provider: z.literal('iyzico'),
      api_key: z.string().min(1),
      api_base: z.string().url().default('https://api.iyzipay.com'),
    })
    .strict(),
  /** Papara's payment get (`GET /payments?id=…`, `ApiKey` header). */
  z
    .object({
      provider: z.literal('papara'),
      api_key: z.string().min(1),
      api_base: z.string().url().default('https://merchant-api.papara.com'),
    })
    .strict(),
]);
export type ConfirmFetch = z.infer<typeof fetchSchema>;
export type ConfirmProvider = ConfirmFetch['provider'];

/**
 * What each provider's notification carries, as the preset reads it. PayTR: `total_amount` in kuruş
 * and `status` (its currency field is optional, so it is compared only when the source names it).
 * iyzico: only the status (its notifications carry no amount). Papara: the payment object itself.
 */
export const confirmPresets: Record<ConfirmProvider, { id: string[]; expect: ConfirmExpect }> = {
  paytr: { id: ['form:merchant_oid'], expect: { amount: { at: 'form:total_amount', minor_units: 2 }, status: 'form:status' } },
  iyzico: { id: ['body:paymentId', 'body:iyziPaymentId'], expect: { status: 'body:status' } },
  papara: { id: ['body:id'], expect: { amount: { at: 'body:amount', minor_units: 0 }, currency: 'body:currency', status: 'body:status' } },
};

export const confirmSchema = z
  .object({
    fetch: fetchSchema,
    /** Where the provider's payment id is in the notification; absent: the provider's (PayTR: `form:merchant_oid`). */
    id: z.union([z.string().regex(LOCATOR), z.array(z.string().regex(LOCATOR)).min(1)]).optional(),
    /** What to compare; absent keys: the provider's defaults. */
    expect: confirmExpectSchema.optional(),
    /** A deadline for the lookup; past it the attempt is retried on the source's ladder. */
    timeout: durationMs.pipe(z.number().min(1).max(60_000, 'expected at most 1m')).default(10_000),
  })
  .strict()
  .transform((c) => {
    const preset = confirmPresets[c.fetch.provider];
    const id = c.id === undefined ? preset.id : Array.isArray(c.id) ? c.id : [c.id];
    return { fetch: c.fetch, id, expect: { ...preset.expect, ...c.expect }, timeout: c.timeout };
  });
export type ConfirmConfig = z.infer<typeof confirmSchema>;
