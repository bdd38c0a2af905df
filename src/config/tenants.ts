import { z } from 'zod';
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

export const tenantsSchema = z
  .object({
    limits: tenantLimitsSchema.default(tenantLimitsSchema.parse({})),
  })
  .strict();

export type TenantLimits = z.infer<typeof tenantLimitsSchema>;
