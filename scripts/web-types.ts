// Writes web/api-types.d.ts (the panel's types for the admin API) from the OpenAPI document the API
// serves. Run with `npm run web:types`; a test checks the checked-in copy is current.
import { writeFileSync } from 'node:fs';
import { renderApiTypes } from '../src/api/openapi-types.js';
import { servedOpenApiDocument } from '../src/api-reference.js';
import { createPgliteDb } from '../src/store/pglite.js';

const db = await createPgliteDb();
try {
  writeFileSync(new URL('../web/api-types.d.ts', import.meta.url), renderApiTypes(await servedOpenApiDocument(db)));
  process.stdout.write('wrote web/api-types.d.ts\n');
} finally {
  await db.close();
}
