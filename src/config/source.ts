import { z } from 'zod';
import { networkCidr } from './networks.js';
import { durationMs } from './units.js';
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
    base: durationMs.default(10_000),
    /** Most one backoff may be. */
    cap: durationMs.default(6 * 3_600_000),
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
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.scheme === 'hmac' && !s.hmac) {
      ctx.addIssue({ code: 'custom', path: ['hmac'], message: 'scheme "hmac" needs an "hmac" block (signature_header, encoding, …)' });
    }
    for (const problem of s.hmac ? hmacOptionProblems(s.hmac) : []) ctx.addIssue({ code: 'custom', path: ['hmac'], message: problem });
  });
export type SourceConfig = z.infer<typeof sourceSchema>;
