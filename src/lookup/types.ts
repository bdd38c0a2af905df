/** A payment as the provider's own API reports it, in the provider's words. */
export interface ProviderPayment {
  /** The provider's status: PayTR `success` / `failed`, iyzico's `paymentStatus`, Papara's `0` / `1` / `2`. */
  status: string;
  /** The amount paid as decimal text (`10,8`, `10.80`); null when the provider reports none for this status. */
  amount: string | null;
  currency: string | null;
  /** The provider's own payment id, when its answer carries one (iyzico's `paymentId`, Papara's `id`). */
  id: string | null;
}

/** Which payment lookup, and the credentials it signs or authenticates with. */
export type PaymentLookup =
  | { provider: 'paytr'; url: string; merchantId: string; merchantKey: string; merchantSalt: string }
  | { provider: 'iyzico'; apiBase: string; apiKey: string; secretKey: string }
  | { provider: 'papara'; apiBase: string; apiKey: string };

/** The provider's name as messages say it. */
export const providerTitle: Record<PaymentLookup['provider'], string> = { paytr: 'PayTR', iyzico: 'iyzico', papara: 'Papara' };
