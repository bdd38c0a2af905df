import { pino } from 'pino';
import { buildApp } from './app.js';
import { parseConfig } from './config/index.js';
import { createMetricsRegistry } from './metrics.js';
import { resolveSettings } from './settings.js';
import type { Db } from './store/db.js';
import type { OpenApiDocument } from './api/openapi.js';
import { renderApiMarkdown } from './api/openapi-markdown.js';

/**
 * The admin API's OpenAPI document as a running tekil serves it, from an app built with the default
 * configuration on the given store (nothing is queried: routes are only registered).
 */
export async function servedOpenApiDocument(db: Db): Promise<OpenApiDocument> {
  const config = parseConfig({}, {});
  const ctx = { config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'silent' }), metrics: createMetricsRegistry(false) };
  const app = await buildApp({ ctx, roles: new Set(['api']), adminToken: 'reference' });
  try {
    return (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as OpenApiDocument;
  } finally {
    await app.close();
  }
}

/** docs/api.md's text (`npm run docs:api` writes it; a test checks the checked-in copy is current). */
export async function apiReferenceMarkdown(db: Db): Promise<string> {
  return renderApiMarkdown(await servedOpenApiDocument(db));
}
