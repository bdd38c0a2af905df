import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../store/db.js';
import { deleteSession, insertSession, selectSession } from '../store/sql/auth/sessions.js';
import { hashToken } from './token-hash.js';
import { tenantCallerName } from './tenant-tokens.js';
import type { Caller } from './roles.js';

export const SESSION_COOKIE = 'tekil_session';
/**
 * The portal's session cookie: its own name, so a portal link opened in a browser signed in to the panel
 * (an admin's **Open portal**, or another tenant's link sent to a victim) never replaces the panel's session.
 */
export const PORTAL_COOKIE = 'tekil_portal';
/**
 * Marks a request as the portal's (`x-tekil-portal: 1`, or `?portal=1` where no header can be set: an
 * EventSource): its session is read from the portal's cookie, and every other request's from the panel's.
 */
export const PORTAL_HEADER = 'x-tekil-portal';

/** The cookie a request's session is read from: the portal's when the request says it is the portal's. */
export function sessionCookieName(portal: boolean): string {
  return portal ? PORTAL_COOKIE : SESSION_COOKIE;
}

/** Whether a request says it is the portal's: the header, or `portal=1` in the query. */
export function isPortalRequest(headers: Record<string, string | string[] | undefined>, query: unknown): boolean {
  return headers[PORTAL_HEADER] === '1' || (typeof query === 'object' && query !== null && (query as Record<string, unknown>).portal === '1');
}
/** The header a cookie-authenticated change must carry, with the value `GET /api/v1/session` gives. */
export const CSRF_HEADER = 'x-tekil-csrf';
/** A working day: long enough not to sign in twice a shift, short enough that a forgotten tab expires. */
export const SESSION_TTL_MS = 12 * 3_600_000;

export interface Session {
  caller: Caller;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * Opens a session for a caller; returns the cookie's value (only its hash is stored). A session of the
 * admin token keeps the token's hash, so a new TEKIL_ADMIN_TOKEN ends it (see findSession).
 */
export async function openSession(db: Queryable, caller: Caller, adminToken: string, ttlMs = SESSION_TTL_MS): Promise<{ id: string; session: Session }> {
  const id = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const isAdmin = caller.operatorId === undefined && caller.tenantId === undefined;
  await insertSession(db, {
    idHash: hashToken(id),
    operatorId: caller.operatorId ?? null,
    role: caller.role,
    csrfToken,
    ttlMs,
    adminTokenHash: isAdmin ? hashToken(adminToken) : null,
    tenantId: caller.tenantId ?? null,
    tenantTokenId: caller.tenantTokenId ?? null,
  });
  return { id, session: { caller, csrfToken, expiresAt: new Date(Date.now() + ttlMs) } };
}

/**
 * The session a cookie stands for, checked on every request against the token it came from: none when
 * it expired, was closed, its operator was revoked (even by a revoke that raced the sign-in), or it was
 * made with an admin token other than the running one.
 */
export async function findSession(db: Queryable, id: string, adminToken: string): Promise<Session | undefined> {
  const row = await selectSession(db, hashToken(id));
  if (!row) return undefined;
  if (row.tenant_id !== null) {
    // A tenant's session: never admin, whatever the row says.
    const role = row.role === 'operator' ? 'operator' : 'viewer';
    const caller: Caller = { role, name: tenantCallerName(row.tenant_id, row.tenant_token_id ?? undefined), tenantId: row.tenant_id };
    if (row.tenant_token_id !== null) caller.tenantTokenId = row.tenant_token_id;
    return { caller, csrfToken: row.csrf_token, expiresAt: row.expires_at };
  }
  if (row.operator_id === null && row.admin_token_hash !== hashToken(adminToken)) return undefined;
  const caller: Caller =
    row.operator_id === null ? { role: 'admin', name: 'admin' } : { role: row.role, operatorId: row.operator_id, name: row.name ?? row.operator_id };
  return { caller, csrfToken: row.csrf_token, expiresAt: row.expires_at };
}

export function closeSession(db: Queryable, id: string): Promise<void> {
  return deleteSession(db, hashToken(id));
}

export function csrfMatches(session: Session, presented: string | undefined): boolean {
  if (!presented) return false;
  const a = Buffer.from(session.csrfToken);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** One cookie's value from a Cookie header (the only cookie tekil reads). */
/** Every value a Cookie header carries under a name (a partitioned and an unpartitioned cookie may share it). */
export function readCookies(header: string | undefined, name: string): string[] {
  const values: string[] = [];
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    const value = eq > 0 && part.slice(0, eq).trim() === name ? part.slice(eq + 1).trim() : '';
    if (value) values.push(value);
  }
  return values;
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/**
 * The session cookie. `embeddable` (the portal inside a provider's iframe, `portal.frame_ancestors`)
 * needs `SameSite=None`, which browsers accept only with `Secure`: a framed page is a third-party
 * context, where a Strict or Lax cookie is not sent. It is also `Partitioned` (CHIPS): a browser that
 * blocks third-party cookies still keeps a partitioned one, stored under the embedding panel's site
 * and sent only inside frames of that site.
 */
export function sessionCookie(
  id: string,
  secure: boolean,
  maxAgeMs = SESSION_TTL_MS,
  embeddable = false,
  partitioned = embeddable,
  name: string = SESSION_COOKIE,
): string {
  const parts = [`${name}=${id}`, 'Path=/', 'HttpOnly', embeddable ? 'SameSite=None' : 'SameSite=Strict', `Max-Age=${Math.floor(maxAgeMs / 1000)}`];
  if (secure || embeddable) parts.push('Secure');
  if (partitioned) parts.push('Partitioned');
  return parts.join('; ');
}
