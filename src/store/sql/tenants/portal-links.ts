import type { Queryable } from '../../db.js';
import { defineStatement, type NoParams } from '../statement.js';

/** One-time links into the merchant portal (migration 019). Only a hash of the link's token is kept. */

export interface PortalLinkRow {
  id: string;
  tenant_id: string;
  role: 'viewer' | 'operator';
  expires_at: Date;
}

/** No row when the tenant does not exist or is being deleted. */
const insertPortalLinkStatement = defineStatement<{ id: string; tenantId: string; role: string; hash: string; ttlMs: number }, PortalLinkRow>(
  'portal_links_insert',
  `INSERT INTO portal_links (id, tenant_id, role, hash, expires_at)
     SELECT $id, t.id, $role, $hash, now() + $ttlMs * interval '1 millisecond' FROM tenants t WHERE t.id = $tenantId AND t.deleted_at IS NULL
   RETURNING id, tenant_id, role, expires_at`,
);

/**
 * Uses a link: one statement marks it used only if it was unused, unexpired and its tenant is live, so
 * two opens racing each other cannot both win. Links long expired are swept on the way.
 */
const redeemPortalLinkStatement = defineStatement<{ hash: string }, PortalLinkRow>(
  'portal_links_redeem',
  `UPDATE portal_links l SET used_at = now()
     FROM tenants t
     WHERE l.hash = $hash AND l.used_at IS NULL AND l.expires_at > now() AND t.id = l.tenant_id AND t.deleted_at IS NULL AND NOT t.disabled
   RETURNING l.id, l.tenant_id, l.role, l.expires_at`,
);

/** What a refused link was, for its audit row and page: nothing when the token is no link at all. */
const selectPortalLinkStatement = defineStatement<{ hash: string }, PortalLinkRow & { used_at: Date | null }>(
  'portal_links_select',
  'SELECT id, tenant_id, role, expires_at, used_at FROM portal_links WHERE hash = $hash',
);

/** Links that expired a day ago or more are of no use, even to explain a refusal. */
const deleteOldPortalLinks = defineStatement<NoParams, never>(
  'portal_links_delete_old',
  `DELETE FROM portal_links WHERE expires_at < now() - interval '1 day'`,
);

export async function insertPortalLink(
  db: Queryable,
  row: { id: string; tenantId: string; role: string; hash: string; ttlMs: number },
): Promise<PortalLinkRow | undefined> {
  // Links are made one at a time, when a merchant opens the portal: sweeping here costs nothing.
  await deleteOldPortalLinks.run(db);
  return (await insertPortalLinkStatement.run(db, row)).rows[0];
}

export async function redeemPortalLink(db: Queryable, hash: string): Promise<PortalLinkRow | undefined> {
  return (await redeemPortalLinkStatement.run(db, { hash })).rows[0];
}

export async function selectPortalLink(db: Queryable, hash: string): Promise<(PortalLinkRow & { used_at: Date | null }) | undefined> {
  return (await selectPortalLinkStatement.run(db, { hash })).rows[0];
}
