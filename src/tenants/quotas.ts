import type { QuotaName, Quotas } from '../config/tenants.js';
import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { countLiveEndpoints, countLiveSecrets, countLiveTokens, lockTenantQuotas, selectTenantQuotas } from '../store/sql/tenants/quotas.js';

/**
 * Quotas per tenant: what one merchant may hold (endpoints, tokens, live secrets per endpoint, open event
 * streams). The configured defaults (`tenants.quotas`) apply unless the tenant's own `quotas` name a
 * value (an operator's `PATCH /api/v1/tenants/:id/quotas`: a provider's plans differ). Without them one
 * merchant made 1,000 endpoints in 6.4 s, every one failing, and each opened an operator's incident.
 */

/** The quotas that apply to a tenant: its own where it has them, else the configured defaults. */
export function effectiveQuotas(defaults: Quotas, own: Record<string, unknown> | undefined): Quotas {
  const out = { ...defaults };
  for (const key of Object.keys(defaults) as QuotaName[]) {
    const value = own?.[key];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) out[key] = value;
  }
  return out;
}

const WHAT: Record<QuotaName, string> = {
  endpoints: 'live endpoints',
  tokens: 'live tokens',
  secrets: 'live signing secrets on one endpoint',
  streams: 'open event streams',
};

export function quotaExceeded(tenantId: string, name: QuotaName, limit: number): TekilError {
  return new TekilError('QUOTA_EXCEEDED', `tenant ${tenantId} has ${limit} ${WHAT[name]}, its quota (${name}: ${limit})`, {
    hint:
      name === 'secrets'
        ? 'wait for an older secret to expire, or rotate with a shorter window'
        : `remove one first, or ask the operator to raise the tenant's ${name} quota (PATCH /api/v1/tenants/${tenantId}/quotas)`,
  });
}

/**
 * Checks there is room for one more endpoint or token of the tenant, holding the tenant's row until the
 * caller's transaction ends (run it in the transaction that adds the row). A tenant that does not exist
 * passes: the insert that follows reports it as before.
 */
export async function requireRoom(tx: Queryable, defaults: Quotas, tenantId: string, name: 'endpoints' | 'tokens'): Promise<void> {
  const row = (await lockTenantQuotas.run(tx, { tenantId })).rows[0];
  if (!row) return;
  const limit = effectiveQuotas(defaults, row.quotas)[name];
  const count = name === 'endpoints' ? countLiveEndpoints : countLiveTokens;
  const held = (await count.run(tx, { tenantId })).rows[0]!.n;
  if (held >= limit) throw quotaExceeded(tenantId, name, limit);
}

/** Checks one more secret may sign for the endpoint (a rotation keeps the old ones for their window). */
export async function requireSecretRoom(tx: Queryable, defaults: Quotas, tenantId: string, endpointId: string): Promise<void> {
  const row = (await lockTenantQuotas.run(tx, { tenantId })).rows[0];
  if (!row) return;
  const limit = effectiveQuotas(defaults, row.quotas).secrets;
  const held = (await countLiveSecrets.run(tx, { endpointId })).rows[0]!.n;
  if (held >= limit) throw quotaExceeded(tenantId, 'secrets', limit);
}

/** The tenant's quotas as they apply now (no lock): the stream cap, and what the API shows. */
export async function quotasOf(db: Queryable, defaults: Quotas, tenantId: string): Promise<Quotas & { own: Record<string, unknown> }> {
  const own = (await selectTenantQuotas.run(db, { tenantId })).rows[0]?.quotas ?? {};
  return { ...effectiveQuotas(defaults, own), own };
}
