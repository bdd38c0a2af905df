import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../src/api/openapi.js';
import { createClient, TekilApiError, type TekilClient } from '../src/client/index.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';

const TOKEN = 'api-answers-admin-token';

// Every route's answer is described in the OpenAPI document (from its RouteSpec.response), the typed
// client (tekil/client) is generated from it, and real answers of a running tekil match what it says.
describe('admin API answers: described for every route, and as described', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let client: TekilClient;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    if (onPostgres) t = await createTestDb();
    const env = {
      TEKIL_ADMIN_TOKEN: TOKEN,
      TEKIL_DATA_DIR: mkdtempSync(join(tmpdir(), 'tekil-answers-')),
      TEKIL_SECRET_KEY: 'answers key',
      DATABASE_URL: t?.url ?? '',
    };
    const config = parseConfig({ sending: { allow_networks: ['127.0.0.0/8'] }, tenants: { allow_networks: ['127.0.0.0/8'] } });
    tekil = await startTekil({ config, roles: new Set(['api']), env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
    client = createClient({ baseUrl: tekil.url, token: TOKEN });
    doc = (await (await fetch(`${tekil.url}/api/v1/openapi.json`)).json()) as OpenApiDocument;
  });
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
  });

  it('gives every route that answers JSON a response schema', () => {
    const missing: string[] = [];
    let routes = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        routes++;
        const success = Object.entries(operation!.responses).find(([status]) => status.startsWith('2'))![1];
        const json = success.content?.['application/json'];
        if (!json) continue; // a file or a stream
        if (Object.keys(json.schema).length === 0) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(routes).toBeGreaterThan(55);
    expect(missing).toEqual([]);
  });

  it('answers, through the typed client, what the document declares for each route called', async () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addFormat('date-time', { validate: (text: string) => !Number.isNaN(Date.parse(text)) });
    const check = (route: string, answer: unknown) => {
      const [method, path] = route.split(' ') as [string, string];
      const operation = doc.paths[`/api/v1${path}`]![method.toLowerCase() as 'get']!;
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1];
      const validate = ajv.compile(success.content!['application/json']!.schema);
      expect(validate(answer), `${route}: ${JSON.stringify(validate.errors)}`).toBe(true);
    };

    const tenant = await client.call('POST /tenants', { body: { id: 'm_answers', name: 'Answers' } });
    check('POST /tenants', tenant);
    const endpoint = await client.call('POST /endpoints', { body: { url: 'http://127.0.0.1:9/hook', tenant_id: 'm_answers' } });
    check('POST /endpoints', endpoint);
    expect(endpoint.secret).toMatch(/^whsec_/);
    check('GET /endpoints/{id}', await client.call('GET /endpoints/{id}', { path: { id: endpoint.id } }));
    check('GET /endpoints', await client.call('GET /endpoints', { query: { tenant_id: 'm_answers' } }));
    const type = await client.call('POST /event-types', { body: { name: 'invoice.paid', schema: { type: 'object' }, example: { id: 1 } } });
    check('POST /event-types', type);
    check('GET /event-types', await client.call('GET /event-types'));
    const published = await client.call('POST /messages', { body: { type: 'invoice.paid', tenant_id: 'm_answers', data: { id: 2 } } });
    check('POST /messages', published);
    const message = await client.call('GET /messages/{id}', { path: { id: published.id } });
    check('GET /messages/{id}', message);
    expect(message.deliveries[0]!.endpoint_id).toBe(endpoint.id);
    check('GET /messages', await client.call('GET /messages', { query: { tenant_id: 'm_answers' } }));
    check('GET /deliveries', await client.call('GET /deliveries'));
    check('GET /tenants', await client.call('GET /tenants'));
    check('GET /tenants/{id}/quotas', await client.call('GET /tenants/{id}/quotas', { path: { id: 'm_answers' } }));
    check('GET /session', await client.call('GET /session'));
    check('GET /incidents', await client.call('GET /incidents'));

    // A refusal is a coded error with its details.
    const refused = await client.call('POST /messages', { body: { type: 'invoice.paid', data: 'text' } }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TekilApiError);
    expect(refused).toMatchObject({ status: 422, code: 'EVENT_SCHEMA_MISMATCH', details: { path: '$.data' } });
  });
});
