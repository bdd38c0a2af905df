import { describe, expect, it } from 'vitest';
import { parseConfig } from './index.js';

const paytr = { scheme: 'paytr', paytr: { merchant_key: 'k', merchant_salt: 's' } };

describe('confirm: configuration', () => {
  it("fills in the provider's defaults; what the source sets wins", () => {
    const config = parseConfig({ sources: { p: { ...paytr, confirm: { fetch: { provider: 'paytr', merchant_id: 100200 }, expect: { currency: 'TRY' } } } } });
    expect(config.sources.p!.confirm).toEqual({
      fetch: { provider: 'paytr', merchant_id: '100200', url: 'https://www.paytr.com/odeme/durum-sorgu' },
      id: ['form:merchant_oid'],
      expect: { amount: { at: 'form:total_amount', minor_units: 2 }, status: 'form:status', currency: 'TRY' },
      timeout: 10_000,
    });
  });

  it('refuses a PayTR or iyzico lookup on a source of another scheme (it signs with that block)', () => {
    expect(() =>
      parseConfig({
        sources: {
          p: { scheme: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], confirm: { fetch: { provider: 'paytr', merchant_id: '1' } } },
        },
      }),
    ).toThrow(/confirm\.fetch "paytr" signs with the "paytr" block/);
    expect(() => parseConfig({ sources: { p: { ...paytr, reconcile: { preset: 'iyzico', api_key: 'a' } } } })).toThrow(/reconcile "iyzico"/);
  });

  it('refuses an amount that is not read from the notification, and an unknown provider', () => {
    expect(() =>
      parseConfig({ sources: { p: { ...paytr, confirm: { fetch: { provider: 'paytr', merchant_id: '1' }, expect: { amount: '49.90' } } } } }),
    ).toThrow(/locator into the notification/);
    expect(() => parseConfig({ sources: { p: { ...paytr, confirm: { fetch: { provider: 'stripe' } } } } })).toThrow();
  });

  it('reconcile: preset paytr is the paytr adapter, with its own defaults', () => {
    const config = parseConfig({ sources: { p: { ...paytr, reconcile: { preset: 'paytr', merchant_id: '100200' } } } });
    expect(config.sources.p!.reconcile).toMatchObject({
      provider: 'paytr',
      merchant_id: '100200',
      page_size: 50,
      url: 'https://www.paytr.com/odeme/durum-sorgu',
    });
  });
});
