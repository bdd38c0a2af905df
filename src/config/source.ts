import { z } from 'zod';
import { networkCidr } from './networks.js';
import { durationMs, retryWaitMs } from './units.js';
import { retentionSchema } from './retention.js';
import { hmacOptionProblems, hmacSchemeOptions } from '../signing/hmac.js';
import { schemeNames } from '../signing/types.js';

// The signing options are the signing module's; configuration re-exports them for its readers.
export { hmacSchemeOptions, type HmacSchemeOptions } from '../signing/hmac.js';
export { schemeNames, type SchemeName } from '../signing/types.js';

/**
 * Where a value lives in a request: `body:<dotted.path>` in the parsed JSON body, or
 * `header:<name>` (case-insensitive).
 */
export const locator = z
  .string()
  .regex(/^(body:[^\s]+|header:[A-Za-z0-9-]+)$/, 'expected "body:<dotted.path>" or "header:<name>"');
const locatorList = z.union([locator, z.array(locator).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

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
    url: z.string().url(),
    /** A deadline for the whole exchange, from connecting to the answer's last byte. */
    timeout: durationMs.pipe(z.number().min(1, 'expected at least 1ms').max(300_000, 'expected at most 5m')).default(10_000),
    /** Networks (CIDR) the forward URL may resolve to although not public; absent: forwardDefaultNetworks. */
    allow_networks: z.array(networkCidr).optional(),
    /** Standard Webhooks secret (`whsec_<base64>`) tekil signs forwarded requests with. */
    secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/, 'expected "whsec_" followed by base64'),
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
    /** The list URL, e.g. `https://api.paymos.example/v1/invoices`. */
    url: z.string().url(),
    auth: reconcileAuthSchema,
    /** Provider statuses to list, one query parameter each (`status=paid&status=paid_over`). */
    statuses: z.array(z.string().min(1)).min(1).default(['paid', 'paid_over']),
    /** The event type a webhook announcing each status carries; absent ones: `<type_prefix>.<status>`. */
    event_types: z.record(z.string(), z.string().min(1)).default({}),
    type_prefix: z.string().min(1).default('invoice'),
    /** The body of a synthetic delivery: the source's own envelope around the listed resource. */
    envelope: z.enum(['paymos', 'standard', 'stripe']).default('paymos'),
    params: z
      .object({
        status: z.string().default('status'),
        limit: z.string().default('limit'),
        cursor: z.string().default('cursor'),
        since: z.string().default('updated_since'),
        until: z.string().default('updated_until'),
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

/** `reconcile:` on a source: compare with the provider's own API (see docs/reconcile.md). */
export const reconcileSchema = z.discriminatedUnion('provider', [stripeReconcileSchema, genericReconcileSchema, githubReconcileSchema]);
export type ReconcileConfig = z.infer<typeof reconcileSchema>;
export type StripeReconcileConfig = z.infer<typeof stripeReconcileSchema>;
export type GenericReconcileConfig = z.infer<typeof genericReconcileSchema>;
export type GithubReconcileConfig = z.infer<typeof githubReconcileSchema>;

export const sourceSchema = z
  .object({
    scheme: z.enum(schemeNames),
    secrets: z.array(z.string().min(1, 'a secret must not be empty')).min(1, 'expected at least one secret'),
    /** Seconds either side of now a signed timestamp may be; 0 disables the check. */
    tolerance: z.number().int().nonnegative().default(300),
    hmac: hmacSchemeOptions.optional(),
    event_id: locatorList.optional(),
    resource_id: locatorList.optional(),
    event_type: locatorList.optional(),
    occurred_at: locatorList.optional(),
    retry: retrySchema.default(retrySchema.parse({})),
    forward: forwardSchema.optional(),
    ordering: orderingSchema.optional(),
    reconcile: reconcileSchema.optional(),
    /** Trim bodies / delete records of settled deliveries after an age; absent: the top-level `retention`. */
    retention: retentionSchema.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.scheme === 'hmac' && !s.hmac) {
      ctx.addIssue({ code: 'custom', path: ['hmac'], message: 'scheme "hmac" needs an "hmac" block (signature_header, encoding, …)' });
    }
    for (const problem of s.hmac ? hmacOptionProblems(s.hmac) : []) ctx.addIssue({ code: 'custom', path: ['hmac'], message: problem });
  });
export type SourceConfig = z.infer<typeof sourceSchema>;
