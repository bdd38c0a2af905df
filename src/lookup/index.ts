import type { ConfirmConfig } from '../config/confirm.js';
import type { IyzicoReconcileConfig, PaytrReconcileConfig, SourceConfig } from '../config/source.js';
import { TekilError } from '../errors.js';
import { iyzicoRetrievePayment } from './iyzico.js';
import { paparaGetPayment } from './papara.js';
import { paytrStatusQuery } from './paytr.js';
import type { PaymentLookup, ProviderPayment } from './types.js';

export { comparePayment, type Comparison } from './compare.js';
export { providerTitle, type PaymentLookup, type ProviderPayment } from './types.js';

/** The payment lookup a source's `confirm.fetch` or `reconcile` names, with the source's own keys. */
export function paymentLookupOf(source: SourceConfig, fetch: ConfirmConfig['fetch'] | PaytrReconcileConfig | IyzicoReconcileConfig): PaymentLookup {
  switch (fetch.provider) {
    // The schema makes these lookups need their scheme, whose block became the key (and PayTR's salt).
    case 'paytr': {
      const named: Readonly<Record<string, string | undefined>> = source.named_secrets ?? {};
      const salt = named.salt;
      if (source.scheme !== 'paytr' || salt === undefined) throw new TekilError('CONFIG_INVALID', 'a PayTR lookup signs with the source\'s "paytr" block');
      return { provider: 'paytr', url: fetch.url, merchantId: fetch.merchant_id, merchantKey: source.secrets[0]!, merchantSalt: salt };
    }
    case 'iyzico':
      if (source.scheme !== 'iyzico') throw new TekilError('CONFIG_INVALID', 'an iyzico lookup signs with the source\'s "iyzico" block');
      return { provider: 'iyzico', apiBase: fetch.api_base, apiKey: fetch.api_key, secretKey: source.secrets[0]! };
    case 'papara':
      return { provider: 'papara', apiBase: fetch.api_base, apiKey: fetch.api_key };
  }
}

/**
 * Reads one payment from its provider. `id` is the provider's payment id (PayTR's `merchant_oid`,
 * iyzico's `paymentId`, Papara's payment `id`); iyzico is asked by `paymentConversationId` instead
 * when `byConversation` is set (reconcile knows its resources by that id).
 * Throws PAYMENT_LOOKUP_FAILED when the provider cannot be read.
 */
export async function lookupPayment(lookup: PaymentLookup, id: string, timeoutMs: number, byConversation = false): Promise<ProviderPayment> {
  switch (lookup.provider) {
    case 'paytr':
      return paytrStatusQuery(lookup, id, timeoutMs);
    case 'iyzico':
      return iyzicoRetrievePayment(lookup, byConversation ? { paymentConversationId: id } : { paymentId: id }, timeoutMs);
    case 'papara':
      return paparaGetPayment(lookup, id, timeoutMs);
  }
}
