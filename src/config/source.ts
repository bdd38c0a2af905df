import { z } from 'zod';
import { networkCidr } from './networks.js';
import { durationMs, retryWaitMs } from './units.js';
import { retentionSchema } from './retention.js';
import { confirmSchema } from './confirm.js';
import { reconcilePresetNames, withReconcilePreset } from './reconcile-presets.js';
import { hmacOptionProblems, hmacSchemeOptions, templateSecretNames } from '../signing/hmac.js';
import { schemeNames } from '../signing/types.js';
import { locatorBodyProblems } from './locator-bodies.js';
import { kindOfUrl, parseBrokerUrl } from '../destinations/broker-url.js';

// The signing options are the signing module's; configuration re-exports them for its readers.
export { hmacSchemeOptions, type HmacSchemeOptions } from '../signing/hmac.js';
export { schemeNames, type SchemeName } from '../signing/types.js';

/**
 * Where a value lives in a request: `body:<dotted.path>` in the parsed JSON body, `form:<field>` in
 * a form body (`application/x-www-form-urlencoded`), or `header:<name>` (case-insensitive).
 */
export const locator = z.string().regex(/^(body:[^\s]+|form:[^\s]+|header:[A-Za-z0-9-]+)$/, 'expected "body:<dotted.path>", "form:<field>" or "header:<name>"');
const locatorList = z.union([locator, z.array(locator).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));
/** Several locators whose values together are one id: `{ all: [form:merchant_oid, form:status] }`. */
const compositeLocator = z.object({ all: z.array(locator).min(2, 'a composite id joins at least two locators') }).strict();
/** An id's locators: one, a list (the first that finds a value), and composites among them. */
const idLocatorList = z.union([locator, compositeLocator, z.array(z.union([locator, compositeLocator])).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

/** The answer to an accepted or duplicate delivery, for providers that want a specific one (PayTR: `OK`). */
export const ackSchema = z
  .object({
    status: z.number().int().min(200).max(299).default(200),
    content_type: z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;.*)?$/, 'expected a media type, e.g. text/plain')
      .default('text/plain'),
    body: z.string().max(4096).default(''),
  })
  .strict();
export type AckConfig = z.infer<typeof ackSchema>;

/** PayTR's credentials (Mağaza Paneli > Destek & Kurulum > Entegrasyon Bilgileri). */
const paytrSchema = z.object({ merchant_key: z.string().min(1), merchant_salt: z.string().min(1) }).strict();
/** iyzico's credentials; `merchant_id` signs subscription notifications. */
const iyzicoSchema = z.object({ secret_key: z.string().min(1), merchant_id: z.string().min(1).optional() }).strict();

/** Retry policy of a source's processing: exponential backoff with full jitter, bounded attempts. */
export const retrySchema = z
  .object({
    /** Attempts in all, the first included; after the last one the delivery is `dead`. */
    max_attempts: z.number().int().positive().default(20),
    /** Upper bound of the first backoff; it doubles with each attempt. */
    base: retryWaitMs.default(10_000),
    /** Most one backoff may be (at most 30d). */
    cap: retryWaitMs.default(6 * 3_600_000),
  })
  .strict();
export type RetryConfig = z.infer<typeof retrySchema>;

/** The forward policy's default: loopback and private networks (an application next door), nothing else. */
export const forwardDefaultNetworks: readonly string[] = ['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'];

/**
 * Forwarding: POST the raw body to the application, signed with Standard Webhooks. The forward URL is
 * the operator's own, usually an application on the same host or network, so loopback and private
 * networks are allowed by default; link-local (cloud metadata), multicast and the other reserved
 * ranges stay refused unless listed, and `allow_networks: []` forwards to public addresses only.
 */
export const forwardSchema = z
  .object({
    /**
     * Where verified deliveries go: an http(s) URL tekil POSTs to, or a broker tekil publishes to
     * (amqp://, nats://, redis://; docs/destinations.md).
     */
    url: z
      .string()
      .url()
      .superRefine((url, ctx) => {
        const kind = kindOfUrl(url);
        if (kind === undefined) ctx.addIssue({ code: 'custom', message: 'expected an http(s), amqp, nats or redis URL' });
        else if (kind !== 'http') {
          try {
            parseBrokerUrl(url);
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: (err as Error).message });
          }
        }
      }),
    /** A deadline for the whole exchange, from connecting to the answer's last byte. */
    timeout: durationMs.pipe(z.number().min(1, 'expected at least 1ms').max(300_000, 'expected at most 5m')).default(10_000),
    /** Networks (CIDR) the forward URL may resolve to although not public; absent: forwardDefaultNetworks. */
    allow_networks: z.array(networkCidr).optional(),
    /** Standard Webhooks secret (`whsec_<base64>`) tekil signs forwarded requests with. */
    secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/, 'expected "whsec_" followed by base64'),
    /** Forward through `sending.proxy` too (an application reached from the proxy's addresses). */
    proxy: z.boolean().optional(),
    /**
     * This source's deliveries being forwarded at once by one worker process: a slow forward target
     * holds this many, never the other sources' share (src/worker/forward-slots.ts).
     */
    max_in_flight: z.number().int().positive().max(10_000).default(64),
  })
  .strict();
export type ForwardConfig = z.infer<typeof forwardSchema>;

/** The ordering guard: resource states ranked, so an event cannot move a resource backwards. */
export const orderingSchema = z
  .object({
    /** Where the resource state is in the event (`body:data.status`); absent means time order only. */
    state: locator.optional(),
    /** Non-terminal states from first to last. */
    states: z.array(z.string().min(1)).default([]),
    /** Terminal states: once one is applied, every later event of the resource is stale. */
    terminal: z.array(z.string().min(1)).default([]),
  })
  .strict();
export type OrderingConfig = z.infer<typeof orderingSchema>;

/** How tekil authenticates to a provider's list API (the generic adapter). */
const reconcileAuthSchema = z.discriminatedUnion('kind', [
  /** `Authorization: Bearer <token>`. */
  z.object({ kind: z.literal('bearer'), token: z.string().min(1) }).strict(),
  /** Any one header, e.g. `X-Api-Key: <value>`. */
  z.object({ kind: z.literal('header'), name: z.string().regex(/^[A-Za-z0-9-]+$/), value: z.string().min(1) }).strict(),
  /** The request's path and query signed with the source's own scheme and first secret. */
  z.object({ kind: z.literal('signature') }).strict(),
]);

/** What every adapter shares: the schedule, the lookback, rate limits. */
const reconcileCommon = {
  /** Run inside `tekil start` (worker role) this often; absent: only by hand (`tekil reconcile`). */
  every: durationMs.pipe(z.number().min(60_000, 'expected at least 1m')).optional(),
  /** A scheduled run looks this far back from now. */
  lookback: durationMs.default(72 * 3_600_000),
  /** A scheduled run records what is missing (true) or only reports it (false). */
  apply: z.boolean().default(false),
  /** Longest `Retry-After` a 429 may make a run wait; a longer one fails the run, to retry later. */
  max_wait: durationMs.default(60_000),
  /** How often one page is retried after a 429, a 5xx or a network error before the run fails. */
  max_retries: z.number().int().nonnegative().default(5),
  /** Least time between two page requests, to stay under a provider's documented rate limit; 0: none. */
  page_interval: durationMs.default(0),
  /** A deadline for each request to the provider. */
  timeout: durationMs.pipe(z.number().min(1)).default(30_000),
};

/** Stripe: the events API lists the webhooks' own bodies under their own `evt_…` ids. */
const stripeReconcileSchema = z
  .object({
    provider: z.literal('stripe'),
    api_key: z.string().min(1),
    api_base: z.string().url().default('https://api.stripe.com'),
    /** Event types to list (`types[]`); absent: every type. */
    types: z.array(z.string().min(1)).optional(),
    ...reconcileCommon,
  })
  .strict();

/** GitHub: a hook's deliveries; failed ones are redelivered by GitHub itself. */
const githubReconcileSchema = z
  .object({
    provider: z.literal('github'),
    api_key: z.string().min(1),
    api_base: z.string().url().default('https://api.github.com'),
    /** `owner/name` for a repository hook, or `org:<name>` for an organisation hook. */
    repo: z.string().regex(/^(org:[A-Za-z0-9_.-]+|[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)$/),
    hook_id: z.union([z.number().int().positive(), z.string().regex(/^\d+$/)]).transform(String),
    ...reconcileCommon,
  })
  .strict();

/** A provider that lists resources (invoices, payments) with a cursor, not events. */
const genericReconcileSchema = z
  .object({
    provider: z.literal('generic'),
    /** A provider's shape in one word (`mercanpay`): fills in the keys left out (src/config/reconcile-presets.ts). */
    preset: z.enum(reconcilePresetNames).optional(),
    /** The list URL, e.g. `https://api.paymos.example/v1/invoices`. */
    url: z.string().url(),
    auth: reconcileAuthSchema,
    /** Provider statuses to list, one query parameter each (`status=paid&status=paid_over`). */
    statuses: z.array(z.string().min(1)).min(1).default(['paid', 'paid_over']),
    /** The API takes one status per call: list each status in turn, instead of all in one query. */
    one_status_per_call: z.boolean().default(false),
    /** The event type a webhook announcing each status carries; absent ones: `<type_prefix>.<status>`. */
    event_types: z.record(z.string(), z.string().min(1)).default({}),
    type_prefix: z.string().min(1).default('invoice'),
    /** The body of a synthetic delivery: the source's own envelope around the listed resource. */
    envelope: z.enum(['paymos', 'standard', 'stripe', 'mercanpay']).default('paymos'),
    params: z
      .object({
        status: z.string().default('status'),
        limit: z.string().default('limit'),
        cursor: z.string().default('cursor'),
        /** null: the API has no time filter, and the whole list is walked. */
        since: z.string().nullable().default('updated_since'),
        until: z.string().nullable().default('updated_until'),
      })
      .strict()
      .default({ status: 'status', limit: 'limit', cursor: 'cursor', since: 'updated_since', until: 'updated_until' }),
    page_size: z.number().int().min(1).max(1000).default(100),
    /** Dotted JSON paths into the answer (items, next cursor) and into each item. */
    paths: z
      .object({
        items: z.string().default('items'),
        next_cursor: z.string().default('next_cursor'),
        id: z.string().default('id'),
        status: z.string().default('status'),
        updated_at: z.string().default('updated_at'),
      })
      .strict()
      .default({ items: 'items', next_cursor: 'next_cursor', id: 'id', status: 'status', updated_at: 'updated_at' }),
    ...reconcileCommon,
  })
  .strict();

/**
 * PayTR and iyzico list no payments: each payment tekil has heard of in the window (a resource of the
 * source) is read back one by one, PayTR's with its status query, iyzico's with its payment retrieve.
 */
const lookupReconcileCommon = {
  /** Resources read back per page (one request each). */
  page_size: z.number().int().min(1).max(200).default(50),
  ...reconcileCommon,
};
const paytrReconcileSchema = z
  .object({
    provider: z.literal('paytr'),
    merchant_id: z.union([z.string().regex(/^\d+$/), z.number().int().positive()]).transform(String),
    url: z.string().url().default('https://www.paytr.com/odeme/durum-sorgu'),
    ...lookupReconcileCommon,
  })
  .strict();
const iyzicoReconcileSchema = z
  .object({
    provider: z.literal('iyzico'),
    api_key: z.string().min(1),
    api_base: z.string().url().default('https://api.iyzipay.com'),
    ...lookupReconcileCommon,
  })
  .strict();

/** `reconcile:` on a source: compare with the provider's own API (see docs/reconcile.md). */
export const reconcileSchema = z.preprocess(
  withReconcilePreset,
  z.discriminatedUnion('provider', [stripeReconcileSchema, genericReconcileSchema, githubReconcileSchema, paytrReconcileSchema, iyzicoReconcileSchema]),
);
export type ReconcileConfig = z.infer<typeof reconcileSchema>;
export type StripeReconcileConfig = z.infer<typeof stripeReconcileSchema>;
export type GenericReconcileConfig = z.infer<typeof genericReconcileSchema>;
export type GithubReconcileConfig = z.infer<typeof githubReconcileSchema>;
export type PaytrReconcileConfig = z.infer<typeof paytrReconcileSchema>;
export type IyzicoReconcileConfig = z.infer<typeof iyzicoReconcileSchema>;

/**
 * Where a `standard` source finds the public keys that check `v1a` signatures: a provider's JWKS
 * document, fetched through a destination guard (public addresses only unless `allow_networks` opens
 * more), kept for `max_age` and fetched again early when a request names a key id it does not hold
 * (at most once per `min_refresh_interval`).
 */
export const jwksSchema = z
  .object({
    url: z
      .string()
      .url()
      .refine((u) => /^https?:/i.test(u), 'expected an http(s) URL'),
    /** Networks (CIDR) the JWKS URL may resolve to although not public (a provider on the same network). */
    allow_networks: z.array(networkCidr).default([]),
    /** How long a fetched document is used before it is fetched again. */
    max_age: durationMs
      .pipe(
        z
          .number()
          .min(1_000, 'expected at least 1s')
          .max(7 * 86_400_000, 'expected at most 7d'),
      )
      .default(3_600_000),
    /** Least time between two fetches, however many unknown key ids arrive: a flood cannot make tekil hammer the provider. */
    min_refresh_interval: durationMs.pipe(z.number().min(0).max(3_600_000, 'expected at most 1h')).default(30_000),
    /** A deadline for one fetch. */
    timeout: durationMs.pipe(z.number().min(1).max(60_000, 'expected at most 1m')).default(5_000),
  })
  .strict();
export type JwksConfig = z.infer<typeof jwksSchema>;

/** A Standard Webhooks public key: `whpk_` and the base64 of the raw 32-byte Ed25519 key. */
const publicKeySetting = z.string().regex(/^whpk_[A-Za-z0-9+/]{43}=$/, 'expected "whpk_" followed by the base64 of a 32-byte Ed25519 public key');

export const sourceSchema = z
  .object({
    scheme: z.enum(schemeNames),
    /** `standard` only: Ed25519 public keys (`whpk_…`) whose `v1a` signatures are accepted. */
    public_keys: z.array(publicKeySetting).min(1).optional(),
    /** `standard` only: a JWKS document whose keys' `v1a` signatures are accepted. */
    jwks: jwksSchema.optional(),
    /** The signing keys; absent for `paytr` and `iyzico`, whose own block holds them. */
    secrets: z.array(z.string().min(1, 'a secret must not be empty')).min(1, 'expected at least one secret').optional(),
    /** Further secrets by name, signed as `{secret:<name>}` in an hmac template (`salt`). */
    named_secrets: z.record(z.string().regex(/^[A-Za-z0-9_]+$/, 'secret names use letters, digits and _'), z.string().min(1)).optional(),
    paytr: paytrSchema.optional(),
    iyzico: iyzicoSchema.optional(),
    /** Seconds either side of now a signed timestamp may be; 0 disables the check. */
    tolerance: z.number().int().nonnegative().default(300),
    hmac: hmacSchemeOptions.optional(),
    event_id: idLocatorList.optional(),
    resource_id: idLocatorList.optional(),
    event_type: locatorList.optional(),
    occurred_at: locatorList.optional(),
    retry: retrySchema.default(retrySchema.parse({})),
    forward: forwardSchema.optional(),
    ordering: orderingSchema.optional(),
    reconcile: reconcileSchema.optional(),
    /** Read the payment back from the provider and compare it before the effect (docs/confirm.md). */
    confirm: confirmSchema.optional(),
    /** Trim bodies / delete records of settled deliveries after an age; absent: the top-level `retention`. */
    retention: retentionSchema.optional(),
    /** The answer to accepted and duplicate deliveries; absent: the scheme's (PayTR: `OK`), else JSON. */
    ack: ackSchema.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.scheme === 'hmac' && !s.hmac) {
      ctx.addIssue({ code: 'custom', path: ['hmac'], message: 'scheme "hmac" needs an "hmac" block (signature_header, encoding, …)' });
    }
    for (const problem of s.hmac ? hmacOptionProblems(s.hmac) : []) ctx.addIssue({ code: 'custom', path: ['hmac'], message: problem });
    for (const name of s.hmac ? templateSecretNames(s.hmac.signed_payload) : []) {
      if (s.named_secrets?.[name] === undefined)
        ctx.addIssue({ code: 'custom', path: ['named_secrets', name], message: `hmac.signed_payload signs {secret:${name}}: set named_secrets.${name}` });
    }
    for (const preset of ['paytr', 'iyzico'] as const) {
      if (s.scheme === preset && !s[preset])
        ctx.addIssue({
          code: 'custom',
          path: [preset],
          message: `scheme "${preset}" needs a "${preset}" block (${preset === 'paytr' ? 'merchant_key, merchant_salt' : 'secret_key'})`,
        });
      if (s.scheme !== preset && s[preset]) ctx.addIssue({ code: 'custom', path: [preset], message: `a "${preset}" block needs scheme "${preset}"` });
    }
    for (const { path, message } of locatorBodyProblems(s)) ctx.addIssue({ code: 'custom', path, message });
    // The lookups of PayTR and iyzico sign with the keys of the source's own block.
    for (const provider of ['paytr', 'iyzico'] as const) {
      if (s.confirm?.fetch.provider === provider && s.scheme !== provider)
        ctx.addIssue({
          code: 'custom',
          path: ['confirm', 'fetch'],
          message: `confirm.fetch "${provider}" signs with the "${provider}" block: it needs scheme "${provider}"`,
        });
      if (s.reconcile?.provider === provider && s.scheme !== provider)
        ctx.addIssue({
          code: 'custom',
          path: ['reconcile'],
          message: `reconcile "${provider}" signs with the "${provider}" block: it needs scheme "${provider}"`,
        });
    }
    const preset = s.scheme === 'paytr' || s.scheme === 'iyzico';
    if (preset && s.secrets)
      ctx.addIssue({ code: 'custom', path: ['secrets'], message: `scheme "${s.scheme}" takes its secrets from its "${s.scheme}" block` });
    for (const key of ['public_keys', 'jwks'] as const) {
      if (s[key] && s.scheme !== 'standard') ctx.addIssue({ code: 'custom', path: [key], message: `${key} checks v1a signatures: only for scheme "standard"` });
    }
    // A source that checks only v1a (public keys, a JWKS) holds no secret at all.
    const asymmetric = s.scheme === 'standard' && (s.public_keys !== undefined || s.jwks !== undefined);
    if (!preset && !s.secrets && !asymmetric)
      ctx.addIssue({
        code: 'custom',
        path: ['secrets'],
        message: s.scheme === 'standard' ? 'expected at least one secret, public_keys or jwks' : 'expected at least one secret',
      });
  })
  .transform(({ paytr, iyzico, secrets, named_secrets, ...rest }) => {
    // The presets' credentials become the source's keys and named secrets, as a generic source has them.
    if (paytr) return { ...rest, paytr, secrets: [paytr.merchant_key], named_secrets: { ...named_secrets, salt: paytr.merchant_salt } };
    if (iyzico) {
      const named = { ...named_secrets, ...(iyzico.merchant_id ? { merchant_id: iyzico.merchant_id } : {}) };
      return { ...rest, iyzico, secrets: [iyzico.secret_key], ...(Object.keys(named).length ? { named_secrets: named } : {}) };
    }
    return { ...rest, secrets: secrets ?? [], ...(named_secrets ? { named_secrets } : {}) };
  });
export type SourceConfig = z.infer<typeof sourceSchema>;
