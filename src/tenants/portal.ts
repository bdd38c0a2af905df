import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { usePortalLink } from './portal-links.js';
import { openSession, PORTAL_COOKIE, sessionCookie } from '../auth/sessions.js';
import { tenantCallerName } from '../auth/tenant-tokens.js';
import type { Caller } from '../auth/roles.js';
import type { Queryable } from '../store/db.js';
import { writeAuditRow } from '../audit/write.js';
import type { Logger } from '../logger.js';
import { PANEL_CSP } from '../dashboard/panel.js';

/** The merchant portal's files: `web/portal/`, beside `src/` and `dist/`. */
const PORTAL_DIR = new URL('../../web/portal/', import.meta.url);
/**
 * What the portal shares with the panel: the API client and the element builder (`web/dom.js`), the
 * one time format per language (`web/dates.js`), served as `/portal/dom.js` and `/portal/dates.js`,
 * where `/portal/assets/*.js` find them by their relative imports `../dom.js`, `../dates.js`.
 */
const SHARED_MODULES = ['dom.js', 'dates.js'] as const;

const types: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export interface PortalOptions {
  db: Queryable;
  logger: Logger;
  /** Origins allowed to frame the portal (`portal.frame_ancestors`); empty: none. */
  frameAncestors: readonly string[];
  /** The configured logo, whose origin the portal's CSP lets images load from. */
  logoUrl?: string | undefined;
}

/**
 * The portal's CSP: the panel's, with `frame-ancestors` naming the provider's panel origins when
 * embedding is configured (else 'none'), and the logo's origin allowed for images. The dashboard and
 * the API keep `frame-ancestors 'none'`.
 */
export function portalCsp(frameAncestors: readonly string[], logoUrl?: string): string {
  let csp = PANEL_CSP.replace("frame-ancestors 'none'", `frame-ancestors ${frameAncestors.length ? frameAncestors.join(' ') : "'none'"}`);
  if (logoUrl) csp = csp.replace("img-src 'self'", `img-src 'self' ${new URL(logoUrl).origin}`);
  return csp;
}

const GONE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Link expired</title></head>
<body><main>
<h1>This link has expired or was already used</h1>
<p>Portal links work once, for a few minutes. Go back to your panel and open Webhooks again to get a new one.</p>
<p lang="tr">Bu bağlantının süresi dolmuş ya da bağlantı daha önce kullanılmış. Panelinize dönüp Webhooklar sayfasını yeniden açın.</p>
<p><small>PORTAL_LINK_GONE</small></p>
</main></body></html>
`;

/**
 * Serves the merchant portal (`/portal/`, docs/tenants.md) and opens it with one-time links: a link
 * made by `POST /api/v1/tenants/:id/portal-links` is exchanged here for a session of its tenant, then
 * the browser lands on `/portal/` without the link in its address bar.
 */
export async function portalRoutes(app: FastifyInstance, options: PortalOptions): Promise<void> {
  const { db, logger, frameAncestors } = options;
  const embeddable = frameAncestors.length > 0;
  const csp = portalCsp(frameAncestors, options.logoUrl);
  const secure = (reply: FastifyReply): FastifyReply => {
    reply
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache');
    // X-Frame-Options cannot name origins: it is sent only when no one may frame the portal.
    if (!embeddable) reply.header('x-frame-options', 'DENY');
    return reply;
  };

  const audit = async (req: FastifyRequest, status: number, tenantId: string | null, target: Record<string, unknown>, caller?: Caller) => {
    await writeAuditRow(db, logger, {
      actor: caller?.name ?? (tenantId ? tenantCallerName(tenantId) : 'unknown'),
      role: caller?.role ?? null,
      address: req.ip ?? null,
      method: req.method,
      route: '/portal/link/:token',
      target,
      status,
      errorCode: status >= 400 ? 'PORTAL_LINK_GONE' : null,
      tenantId,
    });
  };

  // GET only: a HEAD (a link checker, a mail scanner) must not spend the link.
  app.get('/portal/link/:token', { exposeHeadRoute: false }, async (req, reply) => {
    const { token } = req.params as { token: string };
    const used = await usePortalLink(db, token);
    if (!used.ok) {
      // The same page whatever the reason (unknown, used, expired): a link is not confirmed to exist.
      await audit(req, 410, used.link?.tenant_id ?? null, { link: used.link?.id ?? null, reason: used.reason });
      return secure(reply).code(410).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(GONE_PAGE);
    }
    const { link } = used;
    const caller: Caller = { role: link.role, name: tenantCallerName(link.tenant_id), tenantId: link.tenant_id };
    const { id } = await openSession(db, caller, '');
    await audit(req, 303, link.tenant_id, { link: link.id }, caller);
    return reply
      .code(303)
      .header('set-cookie', sessionCookie(id, req.protocol === 'https', undefined, embeddable, embeddable, PORTAL_COOKIE))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('location', '/portal/')
      .send();
  });

  let names: string[];
  try {
    names = readdirSync(PORTAL_DIR);
  } catch {
    return; // no portal files in this build: only the links work
  }
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of names) {
    const type = types[extname(name)];
    if (type) files.set(name, { body: readFileSync(new URL(name, PORTAL_DIR)), type });
  }
  const index = files.get('index.html');
  if (!index) return;
  app.get('/portal', async (_req, reply) => reply.code(308).header('location', '/portal/').send());
  app.get('/portal/', async (_req, reply) => secure(reply).type(index.type).send(index.body));
  for (const name of SHARED_MODULES) {
    const shared = readFileSync(new URL(`../../web/${name}`, import.meta.url));
    app.get(`/portal/${name}`, async (_req, reply) => secure(reply).type(types['.js']!).send(shared));
  }
  app.get('/portal/assets/:name', async (req, reply) => {
    const file = files.get((req.params as { name: string }).name);
    if (!file || file === index) return reply.callNotFound();
    return secure(reply).type(file.type).send(file.body);
  });
}
