import { z } from 'zod';
import { durationMs } from './units.js';

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

export const tenantsSchema = z
  .object({
    quotas: quotasSchema.default(quotasSchema.parse({})),
    streams: streamsSchema.default(streamsSchema.parse({})),
  })
  .strict();
export type TenantsConfig = z.infer<typeof tenantsSchema>;
