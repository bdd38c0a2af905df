import { randomBytes } from 'node:crypto';
import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { insertPortalLink, redeemPortalLink, selectPortalLink, type PortalLinkRow } from '../store/sql/tenants/portal-links.js';
import type { OperatorRole } from '../auth/roles.js';
import { hashToken } from '../auth/token-hash.js';

/** The longest a portal link may live: it is meant to be opened at once, by the merchant who clicked. */
export const PORTAL_LINK_MAX_TTL_MS = 24 * 3_600_000;
export const PORTAL_LINK_DEFAULT_TTL_MS = 10 * 60_000;

/** Makes a one-time link token of a tenant; only its hash is stored. */
export async function createPortalLink(db: Queryable, tenantId: string, role: OperatorRole, ttlMs: number): Promise<{ token: string; link: PortalLinkRow }> {
  const token = randomBytes(32).toString('base64url');
  const id = `pl_${randomBytes(8).toString('hex')}`;
  const link = await insertPortalLink(db, { id, tenantId, role, hash: hashToken(token), ttlMs });
  if (!link) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${tenantId}`);
  return { token, link };
}

export type PortalLinkUse = { ok: true; link: PortalLinkRow } | { ok: false; reason: 'unknown' | 'used' | 'expired'; link?: PortalLinkRow };

/** Uses a link: it works once, before it expires. A refusal says why (for the audit row, not the page). */
export async function usePortalLink(db: Queryable, token: string): Promise<PortalLinkUse> {
  // A link token is 43 base64url characters; anything else is no link (and not worth a query).
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return { ok: false, reason: 'unknown' };
  const hash = hashToken(token);
  const link = await redeemPortalLink(db, hash);
  if (link) return { ok: true, link };
  const seen = await selectPortalLink(db, hash);
  if (!seen) return { ok: false, reason: 'unknown' };
  return { ok: false, reason: seen.used_at ? 'used' : 'expired', link: seen };
}
