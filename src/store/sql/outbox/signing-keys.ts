import { defineStatement } from '../statement.js';

/** A tenant's Ed25519 signing keys (migration 035): the live ones sign `v1a` and are listed in its JWKS. */

export interface SigningKeyRow {
  kid: string;
  public_key: string;
  created_at: Date;
  expires_at: Date | null;
}

const LIVE = '(expires_at IS NULL OR expires_at > now())';

/** Held while a key is added, so two rotations at once cannot both leave a key current. */
export const lockTenantForKeys = defineStatement<{ tenantId: string }, { id: string }>(
  'tekil_outbox_lock_for_keys',
  'SELECT id FROM tenants WHERE id = $tenantId AND deleted_at IS NULL FOR NO KEY UPDATE',
);

export const selectLiveSigningKeys = defineStatement<{ tenantId: string }, SigningKeyRow>(
  'tekil_outbox_live_signing_keys',
  `SELECT kid, public_key, created_at, expires_at FROM tenant_signing_keys
   WHERE tenant_id = $tenantId AND ${LIVE} ORDER BY expires_at DESC NULLS FIRST, created_at DESC`,
);

/**
 * The JWKS document's rows: the tenant (no row when it does not exist or is being deleted) and its live
 * public keys (one row with kid NULL when it has none).
 */
export const selectPublicKeys = defineStatement<{ tenantId: string }, { kid: string | null; public_key: string | null; expires_at: Date | null }>(
  'tekil_outbox_public_keys',
  `SELECT k.kid, k.public_key, k.expires_at FROM tenants t
   LEFT JOIN tenant_signing_keys k ON k.tenant_id = t.id AND (k.expires_at IS NULL OR k.expires_at > now())
   WHERE t.id = $tenantId AND t.deleted_at IS NULL ORDER BY k.expires_at DESC NULLS FIRST, k.created_at DESC`,
);

export const insertSigningKey = defineStatement<{ tenantId: string; kid: string; publicKey: string; secretKeyEnc: string }, SigningKeyRow>(
  'tekil_outbox_insert_signing_key',
  `INSERT INTO tenant_signing_keys (tenant_id, kid, public_key, secret_key_enc) VALUES ($tenantId, $kid, $publicKey, $secretKeyEnc)
   RETURNING kid, public_key, created_at, expires_at`,
);

/** The current key (and any still live) expire at the window's end; none is lengthened. */
export const expireLiveSigningKeys = defineStatement<{ tenantId: string; windowMs: number }, { expires_at: Date }>(
  'tekil_outbox_expire_signing_keys',
  `UPDATE tenant_signing_keys SET expires_at = now() + $windowMs::double precision * interval '1 millisecond'
   WHERE tenant_id = $tenantId AND (expires_at IS NULL OR expires_at > now() + $windowMs::double precision * interval '1 millisecond')
   RETURNING expires_at`,
);

export const deleteExpiredSigningKeys = defineStatement<{ tenantId: string }, never>(
  'tekil_outbox_delete_expired_signing_keys',
  'DELETE FROM tenant_signing_keys WHERE tenant_id = $tenantId AND expires_at <= now()',
);

/** A new updated_at on the tenant's v1a endpoints makes every dispatcher fetch its keys again. */
export const touchSigningEndpoints = defineStatement<{ tenantId: string }, never>(
  'tekil_outbox_touch_signing_endpoints',
  `UPDATE endpoints SET updated_at = now() WHERE tenant_id = $tenantId AND signing <> 'v1' AND deleted_at IS NULL`,
);
