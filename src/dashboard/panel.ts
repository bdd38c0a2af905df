import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** The panel's files: `web/` beside `src/` and `dist/`, so the same path works from either. */
const WEB_DIR = new URL('../../web/', import.meta.url);

const types: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Everything from this origin, nothing inline, nothing from anywhere else; no framing, no referrer.
 * The panel's script writes deliveries as text, and this stops a page from running anything that
 * slipped through as markup.
 */
export const PANEL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', PANEL_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-cache');
}

/**
 * Serves the panel at `/` (the api role). Its files are read once, at start: only those files can be
 * asked for (no path from the URL reaches the file system).
 */
export async function panelRoutes(app: FastifyInstance): Promise<void> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(WEB_DIR)) {
    const type = types[extname(name)];
    if (type) files.set(name, { body: readFileSync(new URL(name, WEB_DIR)), type });
  }
  const index = files.get('index.html');
  if (!index) return;
  app.get('/', async (_req, reply) => secure(reply).type(index.type).send(index.body));
  app.get('/assets/:name', async (req, reply) => {
    const file = files.get((req.params as { name: string }).name);
    if (!file || file === index) return reply.callNotFound();
    return secure(reply).type(file.type).send(file.body);
  });
}
