import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../src/api/openapi.js';
import { renderApiMarkdown } from '../src/api/openapi-markdown.js';
import { servedOpenApiDocument } from '../src/api-reference.js';
import { createTestDb, type TestDb } from './helpers/db.js';

describe('the OpenAPI document', () => {
  let t: TestDb;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    t = await createTestDb();
    doc = await servedOpenApiDocument(t.db);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is served without a token and describes every admin route with who may call it', () => {
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([m, op]) => ({ path, m, op })));
    expect(operations.length).toBeGreaterThanOrEqual(25);
    for (const { path, m, op } of operations) {
      expect(['public', 'view', 'operate', 'admin'], `${m} ${path}`).toContain(op['x-tekil-permission']);
      // Every {param} in the path is a declared, required path parameter.
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        expect(op.parameters.find((p) => p.in === 'path' && p.name === name)?.required, `${m} ${path} {${name}}`).toBe(true);
      }
    }
  });

  it('says what the validating schemas enforce (limit of the inbox list, the inbox statuses)', () => {
    const list = doc.paths['/api/v1/inbox']?.get;
    const limit = list?.parameters.find((p) => p.name === 'limit');
    expect(limit?.schema).toMatchObject({ maximum: 500, minimum: 1, default: 50 });
    const status = list?.parameters.find((p) => p.name === 'status');
    expect(status?.schema.enum).toEqual(expect.arrayContaining(['pending', 'done', 'dead']));
    const createOperator = doc.paths['/api/v1/operators']?.post;
    expect(createOperator?.requestBody?.required).toBe(true);
    expect(createOperator?.requestBody?.content['application/json'].schema).toMatchObject({ required: ['name', 'role'], additionalProperties: false });
  });

  it('docs/api.md is the rendering of the served document (run `npm run docs:api` after changing a route)', () => {
    const checkedIn = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    expect(checkedIn).toBe(renderApiMarkdown(doc));
  });
});
