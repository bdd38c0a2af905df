import { z } from 'zod';
import { networkCidr } from './networks.js';
import { durationMs } from './units.js';

/**
 * What a tenant's own callers (its tokens, its merchant's portal sessions) may set on their endpoints
 * (docs/tenants.md, "What a tenant may set"). Operators and the admin token are not bound by it, nor
 * are a tenant's defaults, which only operators set.
 */
export const tenantLimitsSchema = z
  .object({
    /** Longest endpoint timeout a tenant may set: a request waiting on a slow receiver holds its resources this long. */
    timeout_max: durationMs.pipe(z.number().min(1, 'expected at least 1ms').max(300_000, 'expected at most 5m')).default(30_000),
    /** Highest max_in_flight a tenant may set on an endpoint. */
    max_in_flight_max: z.number().int().positive().max(1000).default(16),
    /**
     * The fastest rate limit a tenant may set (`20/s`); when set, a tenant may not remove an endpoint's
     * rate limit either. Not set: any rate, or none.
     */
    rate_limit_max: z
      .string()
      .regex(/^[1-9]\d{0,6}\/(s|m|h)$/, 'a rate limit is a count per s, m or h, e.g. 20/s')
      .optional(),
  })
  .strict();
export type TenantLimits = z.infer<typeof tenantLimitsSchema>;

const count = z.number().int().positive().max(1_000_000);

/**
 * What one tenant may hold, unless its own `quotas` (a tenant's column, set by an operator) say otherwise:
 * defaults a provider with many merchants would pick. A merchant past one gets `QUOTA_EXCEEDED`.
 */
export const quotasSchema = z
  .object({
    /** Live endpoints a tenant may make itself (its token or portal session). */
    endpoints: count.default(50),
    /** Live (unrevoked) tenant tokens. */
    tokens: count.default(20),
    /** Live signing secrets one of its endpoints may have at once (each rotation adds one for its window). */
    secrets: count.default(5),
    /** Event streams (`GET /api/v1/events`) open at once for the tenant, per API process. */
    streams: count.default(20),
  })
  .strict();
export type Quotas = z.infer<typeof quotasSchema>;
export type QuotaName = keyof Quotas;

/** Event streams: how often a tenant's shared poll looks, and how many streams one caller may hold. */
export const streamsSchema = z
  .object({
    /** How often one tenant's streams (all of them, one read) look for new and changed deliveries. */
    poll_interval: durationMs.pipe(z.number().min(100)).default(2_000),
    /** Streams open at once with one credential (a token, or a browser session), per API process. */
    per_session: count.default(5),
    /** Streams open at once from one client address, per API process. */
    per_address: count.default(20),
  })
  .strict();

/**
 * Tenants (docs/tenants.md). `allow_networks`: what the operator allows the tenants (merchants) other than `default`. `sending.allow_networks` is the
 * operator's own: it lets the operator's receivers on private networks be reached, and a tenant's
 * endpoints must not inherit it (a merchant's token would reach tekil's own port, its database and
 * internal services, and read their answers in its attempt history).
 */
export const tenantsSchema = z
  .object({
    /** Networks (CIDR) a tenant's endpoints may resolve to although private, loopback or link-local; empty: public addresses only. */
    allow_networks: z.array(networkCidr).default([]),
    limits: tenantLimitsSchema.default(tenantLimitsSchema.parse({})),
    quotas: quotasSchema.default(quotasSchema.parse({})),
    streams: streamsSchema.default(streamsSchema.parse({})),
  })
  .strict();
export type TenantsConfig = z.infer<typeof tenantsSchema>;
