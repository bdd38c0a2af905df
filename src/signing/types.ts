export const schemeNames = ['standard', 'stripe', 'github', 'shopify', 'paymos', 'hmac'] as const;
export type SchemeName = (typeof schemeNames)[number];

/** Request headers with lower-cased names, as Node and Fastify deliver them. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

export interface VerifyInput {
  /** The raw body exactly as received. Nothing is parsed before verification succeeds. */
  body: Buffer;
  headers: IncomingHeaders;
  /** Every active secret of the source; a signature made with any of them is accepted. */
  secrets: readonly string[];
  /** Seconds either side of `now`; 0 disables the timestamp check. */
  toleranceSec: number;
  /** Milliseconds since the epoch; defaults to Date.now(). */
  now?: number;
}

export interface VerifyResult {
  /** The delivery id carried in a header, when the scheme has one (webhook-id, X-GitHub-Delivery…). */
  headerEventId?: string;
  /** The signed timestamp in seconds, when the scheme signs one. */
  timestamp?: number;
}

export interface SignInput {
  body: Buffer | string;
  /** One secret, or several: during a rotation every secret contributes a signature. */
  secrets: readonly string[];
  /** Delivery id, for schemes that carry one in a header. */
  id?: string;
  /** Seconds since the epoch; defaults to now. */
  timestamp?: number;
}

export interface FieldDefaults {
  event_id: string[];
  resource_id: string[];
  event_type: string[];
  occurred_at: string[];
}

/**
 * One webhook signature format. `verify` throws a TekilError with one of the codes
 * SIGNATURE_MISSING, SIGNATURE_MALFORMED, SIGNATURE_INVALID, TIMESTAMP_MISSING,
 * TIMESTAMP_MALFORMED or TIMESTAMP_OUT_OF_TOLERANCE; `sign` returns the headers a provider sends.
 */
export interface SignatureScheme {
  readonly name: SchemeName;
  /** Where the scheme's provider puts the ids (locators, `body:` / `header:`), first match wins. */
  readonly defaults: FieldDefaults;
  /** The header that carries the delivery id, when the scheme has one (`webhook-id`, `X-Webhook-Id`…). */
  readonly idHeader?: string;
  /** How fresh delivery ids for this scheme look (`msg_`, `evt_`); absent means a bare UUID. */
  readonly idPrefix?: string;
  verify(input: VerifyInput): VerifyResult;
  sign(input: SignInput): Record<string, string>;
}
