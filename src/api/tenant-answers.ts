import { z } from 'zod';
import { jsonTime } from './answers.js';

/** Answers about tenants, their tokens and operators, over the rows of src/store/sql/tenants/ and auth/. */

export const tenantAnswer = z.object({
  id: z.string(),
  name: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  disabled: z.boolean(),
  /** Defaults for the tenant's endpoints; null: the file's. */
  ladder: z.unknown(),
  timeout_ms: z.number().nullable(),
  rate_limit: z.string().nullable(),
  endpoint_max_in_flight: z.number().nullable(),
  event_id: z.string().nullable(),
  max_in_flight: z.number().nullable(),
  weight: z.number(),
  created_at: jsonTime,
  updated_at: jsonTime,
});

export const tenantDeletionAnswer = z.object({
  id: z.string(),
  deleted: z.literal(true),
  endpoints: z.number(),
  messages: z.number(),
  deliveries: z.number(),
});

const tokenRole = z.enum(['viewer', 'operator']);

export const tenantTokenAnswer = z.object({
  id: z.string(),
  tenant_id: z.string(),
  name: z.string().nullable(),
  role: tokenRole,
  /** The token's first characters, to tell tokens apart. */
  prefix: z.string(),
  created_at: jsonTime,
  revoked_at: jsonTime.nullable(),
  last_used_at: jsonTime.nullable(),
});

export const operatorAnswer = z.object({
  id: z.string(),
  name: z.string(),
  role: tokenRole,
  created_at: jsonTime,
  last_used_at: jsonTime.nullable(),
  revoked_at: jsonTime.nullable(),
});

export const incidentAnswer = z.object({
  id: z.string(),
  rule: z.string(),
  subject: z.string(),
  state: z.enum(['open', 'closed']),
  opened_at: z.iso.datetime({ offset: true }),
  closed_at: z.iso.datetime({ offset: true }).nullable(),
  /** The details' summary line. */
  summary: z.string(),
  last_value: z.number().nullable(),
  details: z.record(z.string(), z.unknown()),
});
