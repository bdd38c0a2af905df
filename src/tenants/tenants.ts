import { z } from 'zod';
import type { Db, Queryable } from '../store/db.js';
import {
  deleteTenantEndpoints,
  deleteTenantDeliveries,
  deleteTenantLeftovers,
  deleteTenantMessages,
  deleteTenantRow,
  insertTenant,
  listTenants,
  markTenantDeleting,
  selectTenant,
  updateTenant,
  type TenantRow,
} from '../store/sql/tenants/tenants.js';
import { TekilError } from '../errors.js';
import { parseInput } from '../validation.js';
import { endpointTimeout, rateLimitSetting, storableText } from '../outbox/endpoints.js';
import { eventIdModes, newTenantId } from '../outbox/ids.js';
import { ladderGapsMs } from '../outbox/ladders.js';
import { DEFAULT_TENANT_ID } from '../outbox/publish.js';
import { ladderSetting, type SendingConfig } from '../config/sending.js';
import { refreshInheritedSettings } from '../outbox/inherited-settings.js';

/** A tenant id: the provider's own merchant id (`m_123`), as it appears in URLs. */
export const tenantId = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a tenant id is 1 to 64 letters, digits, _ . : -');

/** Free metadata: a JSON object of modest size (the provider's own fields: plan, country, …). */
const metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => JSON.stringify(m).length <= 16_384, 'metadata: at most 16 KiB of JSON')
  .refine((m) => !JSON.stringify(m).includes('\\u0000'), 'must not contain NUL bytes');

/**
 * A tenant's own settings (docs/tenants.md, "A tenant's own settings"): defaults for its endpoints
 * (an endpoint's own value wins, the file's applies when the tenant has none; null clears one), and two
 * of the tenant as a whole: its cap on requests in flight and its weight in the dispatcher's claim.
 */
const tenantSettings = {
  ladder: ladderSetting.nullable().optional(),
  timeout: endpointTimeout.nullable().optional(),
  rate_limit: rateLimitSetting.nullable().optional(),
  endpoint_max_in_flight: z.number().int().positive().max(1000).nullable().optional(),
  event_id: z.enum(eventIdModes).nullable().optional(),
  /** Requests in flight across all its endpoints, every dispatcher together; null: sending.tenant_max_in_flight. */
  max_in_flight: z.number().int().positive().max(100_000).nullable().optional(),
  /** Its share of claims against other tenants with due work (a provider's plans): 1 to 100. */
  weight: z.number().int().positive().max(100).optional(),
};

export const tenantCreateSchema = z
  .object({
    /** The provider's own merchant id; generated (`ten_…`) when not given. */
    id: tenantId.optional(),
    name: storableText(255).optional(),
    metadata: metadata.optional(),
    disabled: z.boolean().optional(),
    ...tenantSettings,
  })
  .strict();

export const tenantUpdateSchema = z
  .object({ name: storableText(255).nullable().optional(), metadata: metadata.optional(), disabled: z.boolean().optional(), ...tenantSettings })
  .strict();

type TenantSettingsInput = z.infer<z.ZodObject<typeof tenantSettings>>;

/** The settings' statement parameters: a given value (null included) is set, a missing one left as it is. */
function settingsParams(input: TenantSettingsInput) {
  if (input.ladder != null) ladderGapsMs(input.ladder);
  return {
    ladderJson: input.ladder == null ? null : JSON.stringify(input.ladder),
    setLadder: input.ladder !== undefined,
    timeoutMs: input.timeout ?? null,
    setTimeout: input.timeout !== undefined,
    rateLimit: input.rate_limit ?? null,
    setRateLimit: input.rate_limit !== undefined,
    endpointMaxInFlight: input.endpoint_max_in_flight ?? null,
    setEndpointMaxInFlight: input.endpoint_max_in_flight !== undefined,
    eventId: input.event_id ?? null,
    setEventId: input.event_id !== undefined,
    maxInFlight: input.max_in_flight ?? null,
    setMaxInFlight: input.max_in_flight !== undefined,
    weight: input.weight ?? null,
  };
}

export const tenantDeleteSchema = z.object({ confirm: z.boolean().optional() }).strict();

export type Tenant = TenantRow;

/** What a confirmed delete removed. */
export interface TenantDeletion {
  id: string;
  deleted: true;
  endpoints: number;
  messages: number;
  deliveries: number;
}

export async function getTenant(db: Queryable, id: string): Promise<Tenant> {
  const { rows } = await selectTenant.run(db, { id });
  if (!rows[0]) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${id}`);
  return rows[0];
}

export async function createTenant(db: Queryable, raw: unknown): Promise<Tenant> {
  const input = parseInput(tenantCreateSchema, raw);
  const id = input.id ?? newTenantId();
  const settings = settingsParams(input);
  const { rows } = await insertTenant.run(db, {
    id,
    name: input.name ?? null,
    metadataJson: JSON.stringify(input.metadata ?? {}),
    disabled: input.disabled ?? false,
    ladderJson: settings.ladderJson,
    timeoutMs: settings.timeoutMs,
    rateLimit: settings.rateLimit,
    endpointMaxInFlight: settings.endpointMaxInFlight,
    eventId: settings.eventId,
    maxInFlight: settings.maxInFlight,
    weight: settings.weight ?? 1,
  });
  if (!rows[0]) throw new TekilError('CONFLICT', `tenant ${id} exists already`, { hint: 'a tenant being deleted keeps its id until the delete ends' });
  return rows[0];
}

/** A page of tenants in id order; `next_cursor` is the id to pass as `after` for the next one. */
export async function listTenantPage(db: Queryable, after: string | undefined, limit = 100): Promise<{ items: Tenant[]; next_cursor: string | null }> {
  const { rows } = await listTenants.run(db, { afterId: after ?? null, limit });
  return { items: rows, next_cursor: rows.length === limit ? rows[rows.length - 1]!.id : null };
}

/**
 * Changes a tenant; new defaults reach its endpoints that do not set the value themselves in the same
 * transaction, so the next claim sends with them.
 */
export async function updateTenantSettings(db: Db, id: string, raw: unknown, sending: SendingConfig): Promise<Tenant> {
  const input = parseInput(tenantUpdateSchema, raw);
  const settings = settingsParams(input);
  return db.transaction(async (tx) => {
    const { rows } = await updateTenant.run(tx, {
      id,
      name: input.name ?? null,
      clearName: input.name === null,
      metadataJson: input.metadata === undefined ? null : JSON.stringify(input.metadata),
      disabled: input.disabled ?? null,
      ...settings,
    });
    if (!rows[0]) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${id}`);
    await refreshInheritedSettings(tx, sending, id);
    return rows[0];
  });
}

/**
 * Deletes a tenant with everything it owns: its messages with their deliveries and attempts, in
 * batches of `batchSize` messages, one short transaction each (as retention does: locks are released
 * at once and no long transaction holds back vacuum), then its endpoints and the tenant. The first
 * step marks the tenant as being deleted, so nothing new is published for it or sent; a delete that
 * stops half way (a crash) is finished by asking again.
 */
export async function deleteTenant(db: Db, id: string, confirm: boolean | undefined, batchSize: number): Promise<TenantDeletion> {
  if (id === DEFAULT_TENANT_ID) throw new TekilError('CONFLICT', 'the default tenant cannot be deleted', { hint: 'delete its endpoints instead' });
  if (confirm !== true) {
    // Checked first so an unconfirmed delete of an unknown id still says the id is unknown.
    await getTenant(db, id);
    throw new TekilError('CONFIRMATION_REQUIRED', `deleting tenant ${id} removes its endpoints, messages, deliveries and attempts`, {
      hint: 'send {"confirm": true} (tekil tenants delete ID --confirm)',
    });
  }
  const marked = await markTenantDeleting.run(db, { id });
  if (!marked.rows[0]) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${id}`);
  let messages = 0;
  let deliveries = 0;
  for (;;) {
    const { rows } = await db.transaction((tx) => deleteTenantMessages.run(tx, { tenantId: id, batchSize }));
    messages += rows[0]!.messages;
    deliveries += rows[0]!.deliveries;
    if (rows[0]!.messages < batchSize) break;
  }
  // Deliveries whose message went first (retention, a crash between two statements): found by tenant.
  for (;;) {
    const { rows } = await db.transaction((tx) => deleteTenantDeliveries.run(tx, { tenantId: id, batchSize }));
    deliveries += rows[0]!.deliveries;
    if (rows[0]!.deliveries < batchSize) break;
  }
  return db.transaction(async (tx) => {
    // A publish that began before the mark may have committed since the last batch: swept here too.
    const late = (await deleteTenantMessages.run(tx, { tenantId: id, batchSize })).rows[0]!;
    await deleteTenantLeftovers.run(tx, { tenantId: id });
    const endpoints = await deleteTenantEndpoints.run(tx, { tenantId: id });
    await deleteTenantRow.run(tx, { id });
    return { id, deleted: true as const, endpoints: endpoints.rowCount, messages: messages + late.messages, deliveries: deliveries + late.deliveries };
  });
}
