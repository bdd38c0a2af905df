import { defineStatement } from '../statement.js';

/**
 * A tenant's quotas (migration 030) and what it holds against them. The tenant's row is locked while a
 * new endpoint, token or secret is counted and added (FOR NO KEY UPDATE: the foreign key checks of its
 * other writes take KEY SHARE and do not wait on it), so two concurrent requests cannot both take the
 * last place.
 */
export const lockTenantQuotas = defineStatement<{ tenantId: string }, { quotas: Record<string, unknown> }>(
  'tekil_tenants_lock_quotas',
  'SELECT quotas FROM tenants WHERE id = $tenantId AND deleted_at IS NULL FOR NO KEY UPDATE',
);

export const selectTenantQuotas = defineStatement<{ tenantId: string }, { quotas: Record<string, unknown> }>(
  'tekil_tenants_select_quotas',
  'SELECT quotas FROM tenants WHERE id = $tenantId AND deleted_at IS NULL',
);

/** Sets or clears (null) one quota of a tenant's own. */
export const setTenantQuotas = defineStatement<{ tenantId: string; quotasJson: string }, { quotas: Record<string, unknown> }>(
  'tekil_tenants_set_quotas',
  `UPDATE tenants SET quotas = jsonb_strip_nulls(quotas || $quotasJson::jsonb), updated_at = now()
   WHERE id = $tenantId AND deleted_at IS NULL RETURNING quotas`,
);

export const countLiveEndpoints = defineStatement<{ tenantId: string }, { n: number }>(
  'tekil_tenants_count_live_endpoints',
  'SELECT count(*)::int AS n FROM endpoints WHERE tenant_id = $tenantId AND deleted_at IS NULL',
);

export const countLiveTokens = defineStatement<{ tenantId: string }, { n: number }>(
  'tekil_tenants_count_live_tokens',
  'SELECT count(*)::int AS n FROM tenant_tokens WHERE tenant_id = $tenantId AND revoked_at IS NULL',
);

/** Secrets that still sign for an endpoint: the current one and those inside their rotation window. */
export const countLiveSecrets = defineStatement<{ endpointId: string }, { n: number }>(
  'tekil_tenants_count_live_secrets',
  'SELECT count(*)::int AS n FROM endpoint_secrets WHERE endpoint_id = $endpointId AND (expires_at IS NULL OR expires_at > now())',
);
