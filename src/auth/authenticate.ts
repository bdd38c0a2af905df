import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { callerForToken } from './operators.js';
import { roleAllows, type Caller, type Permission } from './roles.js';
import { CSRF_HEADER, csrfMatches, findSession, readCookie, sessionCookieName, type Session } from './sessions.js';

/** What a request presents: its headers, as the HTTP server read them. */
export interface PresentedCredentials {
  authorization?: string | undefined;
  cookie?: string | undefined;
  csrf?: string | string[] | undefined;
  /** The request is the portal's: its session is read from the portal's cookie, not the panel's. */
  portal?: boolean;
}

export interface Authenticated {
  caller: Caller;
  /** The session, when the caller came with the session cookie. */
  session?: Session;
}

/**
 * Who is calling: a bearer token (the admin token, an operator's or a tenant's), else the session cookie. A change
 * made with the cookie must also carry the session's CSRF token in a header, which another site's page
 * cannot read or set. Then the permission is checked against the caller's role.
 */
export async function authenticate(
  db: Queryable,
  adminToken: string,
  permission: Permission | undefined,
  presented: PresentedCredentials,
  /** Told who is calling before the role is checked, so a refusal still names its caller (the audit trail). */
  identified?: (caller: Caller) => void,
  /** The route is open to tenant callers; to them every other route is not found (not forbidden: it does not exist for them). */
  route: { tenant: boolean; method: string; url: string } = { tenant: false, method: '', url: '' },
): Promise<Authenticated> {
  const { authorization: header } = presented;
  const cookie = readCookie(presented.cookie, sessionCookieName(presented.portal === true));
  let found: Authenticated;
  if (header === undefined && cookie !== undefined) {
    const session = await findSession(db, cookie, adminToken);
    if (!session) throw new TekilError('UNAUTHORIZED', 'the session has expired or ended', { hint: 'sign in again' });
    // Named before the CSRF check, so its refusal is audited with the session's caller (and tenant).
    identified?.(session.caller);
    if (permission !== 'view' && !csrfMatches(session, typeof presented.csrf === 'string' ? presented.csrf : undefined)) {
      throw new TekilError('FORBIDDEN', 'a change made with the session cookie needs its CSRF token', {
        hint: `send the csrf_token from GET /api/v1/session in the ${CSRF_HEADER} header`,
      });
    }
    found = { caller: session.caller, session };
  } else {
    const token = header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
    const caller = await callerForToken(db, adminToken, token);
    if (!caller) {
      throw new TekilError('UNAUTHORIZED', token === undefined ? 'no admin token' : 'wrong admin token', {
        hint: 'send Authorization: Bearer <TEKIL_ADMIN_TOKEN> (or an operator token)',
      });
    }
    found = { caller };
  }
  identified?.(found.caller);
  if (found.caller.tenantId !== undefined && !route.tenant) throw new TekilError('NOT_FOUND', `no route ${route.method} ${route.url}`);
  // A route without a declared permission (none today) is treated as the strictest.
  const needed = permission ?? 'admin';
  if (!roleAllows(found.caller.role, needed)) {
    throw new TekilError('FORBIDDEN', `the ${found.caller.role} role cannot do this (it needs ${needed})`, {
      hint: needed === 'admin' ? 'use the admin token' : 'use an operator token or the admin token',
    });
  }
  return found;
}
