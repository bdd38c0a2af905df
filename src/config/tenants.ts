import { z } from 'zod';
import { networkCidr } from './networks.js';

/**
 * What the operator allows the tenants (merchants) other than `default`. `sending.allow_networks` is the
 * operator's own: it lets the operator's receivers on private networks be reached, and a tenant's
 * endpoints must not inherit it (a merchant's token would reach tekil's own port, its database and
 * internal services, and read their answers in its attempt history).
 */
export const tenantsSchema = z
  .object({
    /** Networks (CIDR) a tenant's endpoints may resolve to although private, loopback or link-local; empty: public addresses only. */
    allow_networks: z.array(networkCidr).default([]),
  })
  .strict();
export type TenantsConfig = z.infer<typeof tenantsSchema>;
