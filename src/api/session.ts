import { z } from 'zod';
import { TekilError } from '../errors.js';
import { callerForToken } from '../auth/operators.js';
import { closeSession, isPortalRequest, openSession, readCookies, sessionCookie, sessionCookieName } from '../auth/sessions.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { jsonTime } from './answers.js';
import { getTenant } from '../tenants/tenants.js';

const signInBody = z.object({ token: z.string().min(1).max(200) }).strict();

/**
 * Browser sessions: a token is exchanged once for an HttpOnly, SameSite=Strict cookie (Secure over
 * https), so the panel never keeps a token in a URL or in script-readable storage. Changes made with
 * the cookie also need the CSRF token this answer carries, in the `x-tekil-csrf` header.
 */
export function sessionRoutes(routes: ApiRoutes, ctx: Context, adminToken: string): void {
  const tag = 'session';
  routes.add(
    {
      method: 'POST',
      url: '/session',
      tag,
      summary: 'Sign in with a token: sets the session cookie, answers the CSRF token',
      response: z.object({ name: z.string(), role: z.string(), csrf_token: z.string(), expires_at: jsonTime }),
      permission: 'public',
      body: signInBody,
      status: 201,
    },
    async ({ body }, req, reply) => {
      const caller = await callerForToken(ctx.db, adminToken, body.token);
      if (!caller) throw new TekilError('UNAUTHORIZED', 'wrong token', { hint: 'sign in with the admin token, an operator token or a tenant token' });
      req.caller = caller; // for the audit row of this sign-in
      const { id, session } = await openSession(ctx.db, caller, adminToken);
      const name = sessionCookieName(isPortalRequest(req.headers, req.query));
      reply.header('set-cookie', sessionCookie(id, req.protocol === 'https', undefined, false, false, name));
      reply.header('cache-control', 'no-store');
      return { name: caller.name, role: caller.role, csrf_token: session.csrfToken, expires_at: session.expiresAt };
    },
  );
  routes.add(
    {
      method: 'GET',
      url: '/session',
      tag,
      summary: "Who is signed in, with the CSRF token for changes; a tenant's caller also gets its tenant and the portal's branding",
      response: z.object({
        name: z.string().optional(),
        role: z.string().optional(),
        csrf_token: z.string().nullable(),
        /** A tenant's caller: the same CSRF token, its tenant and the portal's branding. */
        csrf: z.string().nullable().optional(),
        tenant: z.object({ id: z.string(), name: z.string().nullable() }).optional(),
        portal: z.object({ name: z.string().nullable(), logo_url: z.string().nullable(), accent_color: z.string().nullable() }).optional(),
      }),
      permission: 'view',
      tenant: true,
    },
    async (_input, req, reply) => {
      reply.header('cache-control', 'no-store');
      const caller = req.caller;
      const csrf = req.session?.csrfToken ?? null;
      const answer = { name: caller?.name, role: caller?.role, csrf_token: csrf };
      if (caller?.tenantId === undefined) return answer;
      const tenant = await getTenant(ctx.db, caller.tenantId);
      const { name, logo_url, accent_color } = ctx.config.portal;
      return {
        ...answer,
        csrf,
        tenant: { id: tenant.id, name: tenant.name },
        portal: { name: name ?? null, logo_url: logo_url ?? null, accent_color: accent_color ?? null },
      };
    },
  );
  routes.add(
    {
      method: 'DELETE',
      url: '/session',
      tag,
      summary: 'Sign out: ends the session and clears its cookie',
      response: z.object({ signed_out: z.boolean() }),
      permission: 'view',
      tenant: true,
    },
    async (_input, req, reply) => {
      // A partitioned cookie is another cookie than an unpartitioned one of the same name, and the browser
      // may send both: every session named is closed.
      // The portal signs out of its own cookie, the panel of its own: neither ends the other's session.
      const name = sessionCookieName(isPortalRequest(req.headers, req.query));
      for (const id of readCookies(req.headers.cookie, name)) await closeSession(ctx.db, id);
      // A portal framed by the provider's panel can only change SameSite=None cookies (a Strict one is not
      // set from inside another site's frame): it clears the partitioned cookie and an unpartitioned one (a
      // tenant token's sign-in, or a portal session from before the cookie was partitioned).
      const secure = req.protocol === 'https';
      const embedded = req.caller?.tenantId !== undefined && ctx.config.portal.frame_ancestors.length > 0;
      reply.header(
        'set-cookie',
        embedded
          ? [sessionCookie('', secure, 0, true, true, name), sessionCookie('', secure, 0, true, false, name)]
          : sessionCookie('', secure, 0, false, false, name),
      );
      return { signed_out: true };
    },
  );
}
