import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../src/api/openapi.js';
import { renderApiTypes, schemaType } from '../src/api/openapi-types.js';
import { servedOpenApiDocument } from '../src/api-reference.js';
import { createTestDb, type TestDb } from './helpers/db.js';

describe("the panel's API types (web/api-types.d.ts)", () => {
  let t: TestDb;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    t = await createTestDb();
    doc = await servedOpenApiDocument(t.db);
  });
  afterAll(async () => t?.close());

  it('are generated from the served OpenAPI document (run `npm run web:types` after changing a route)', () => {
    const checkedIn = readFileSync(new URL('../web/api-types.d.ts', import.meta.url), 'utf8');
    expect(checkedIn).toBe(renderApiTypes(doc));
  });

  it('name every route the panel calls, with its body', () => {
    const types = renderApiTypes(doc);
    for (const route of ['POST /endpoints', 'GET /inbox', 'POST /jobs', 'POST /deliveries/replay-failed', 'POST /inbox/{source}/{event_id}/replay']) {
      expect(types).toContain(`${JSON.stringify(route)}: {`);
    }
    expect(types).toContain('| `/endpoints/${string}/ping`');
    expect(types).toContain('| `/inbox?${string}`');
  });

  it('write a schema as the TypeScript type it allows', () => {
    expect(
      schemaType({
        type: 'object',
        properties: { a: { type: 'integer' }, b: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'null' }] } } },
        required: ['a'],
        additionalProperties: false,
      }),
    ).toBe('{\n  a: number;\n  b?: (string | null)[];\n}');
    expect(schemaType({ enum: ['dead', 'done'] })).toBe('"dead" | "done"');
    expect(schemaType({ type: 'object', additionalProperties: { type: 'string' } })).toBe('{\n  [key: string]: string;\n}');
    expect(schemaType({ type: 'object' })).toBe('Record<string, unknown>');
    expect(schemaType({})).toBe('unknown');
  });
});
