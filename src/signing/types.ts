import type { Ed25519PublicKey, Ed25519SigningKey } from './ed25519.js';

/** Several locators whose values together make one id (`merchant_oid` and `status`). */
export interface CompositeLocator {
  all: readonly string[];
}

/**
 * One place to look: a locator (`body:<dotted.path>` in a JSON body, `form:<field>` in an
 * `application/x-www-form-urlencoded` body, `header:<name>`), or a composite whose every part must
 * be found.
 */
export type LocatorSpec = string | CompositeLocator;

export const schemeNames = ['standard', 'stripe', 'github', 'shopify', 'paymos', 'hmac', 'paytr', 'iyzico', 'papara', 'craftgate', 'sipay'] as const;
export type SchemeName = (typeof schemeNames)[number];

/**
 * The body each scheme's provider sends: `json`, `form` (`application/x-www-form-urlencoded`), or
 * `any` when a source's own settings decide (the generic `hmac` scheme; GitHub, whose hooks may be
 * set to post a form). A locator for the other kind would find nothing, so configuration refuses it.
 */
export const schemeBodies: Readonly<Record<SchemeName, 'json' | 'form' | 'any'>> = {
  standard: 'json',
  stripe: 'json',
  github: 'any',
  shopify: 'json',
  paymos: 'json',
  hmac: 'any',
  paytr: 'form',
  iyzico: 'json',
  papara: 'json',
  craftgate: 'json',
  sipay: 'any',
};

/** Request headers with lower-cased names, as Node and Fastify deliver them. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

export interface VerifyInput {
  /** The raw body exactly as received. Nothing is parsed before verification succeeds. */
  body: Buffer;
  headers: IncomingHeaders;
  /** Every active secret of the source; a signature made with any of them is accepted. */
  secrets: readonly string[];
  /** The source's other secrets by name (`salt`), for templates that sign `{secret:<name>}`. */
  namedSecrets?: Readonly<Record<string, string>>;
  /** Trusted Ed25519 public keys (`standard`'s `v1a`); a `v1a` signature by any of them is accepted. */
  publicKeys?: readonly Ed25519PublicKey[];
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
  /** The source's other secrets by name (`salt`), for templates that sign `{secret:<name>}`. */
  namedSecrets?: Readonly<Record<string, string>>;
  /** Ed25519 secret keys (`standard` only): each adds a `v1a` signature beside the secrets' `v1`. */
  signingKeys?: readonly Ed25519SigningKey[];
  /** Delivery id, for schemes that carry one in a header. */
  id?: string;
  /** Seconds since the epoch; defaults to now. */
  timestamp?: number;
}

export interface FieldDefaults {
  event_id: LocatorSpec[];
  resource_id: LocatorSpec[];
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
  /** The answer the scheme's provider expects to a delivery it may stop sending (PayTR: `OK`). */
  readonly ack?: Acknowledgement;
  verify(input: VerifyInput): VerifyResult;
  /** The headers a provider sends; for a signature carried in the body, its id and time headers only. */
  sign(input: SignInput): Record<string, string>;
  /**
   * For schemes whose signature travels in the body (PayTR's `hash` field): the body with the
   * signature written into it. Absent for schemes that sign in a header.
   */
  signBody?(input: SignInput): Buffer;
}

/** The answer sent for an accepted or duplicate delivery, when a provider wants a specific one. */
export interface Acknowledgement {
  status: number;
  content_type: string;
  body: string;
}
