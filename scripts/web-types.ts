// Writes web/api-types.d.ts (the panel's and portal's types for the admin API) and src/client/api-types.ts from the OpenAPI document the API
// serves. Run with `npm run web:types`; a test checks the checked-in copy is current.
import { writeFileSync } from 'node:fs';
import { renderApiTypes } from '../src/api/openapi-types.js';
import { servedOpenApiDocument } from '../src/api-reference.js';
import { createPgliteDb } from '../src/store/pglite.js';

const db = await createPgliteDb();
try {
  const types = renderApiTypes(await servedOpenApiDocument(db));
  // The browser's types, and the same for the typed client (tekil/client), which the package builds.
  writeFileSync(new URL('../web/api-types.d.ts', import.meta.url), types);
  writeFileSync(new URL('../src/client/api-types.ts', import.meta.url), types);
  process.stdout.write('wrote web/api-types.d.ts and src/client/api-types.ts\n');
} finally {
  await db.close();
}
