// Writes docs/api.md from the OpenAPI document the admin API serves. Run with `npm run docs:api`.
import { writeFileSync } from 'node:fs';
import { apiReferenceMarkdown } from '../src/api-reference.js';
import { createPgliteDb } from '../src/store/pglite.js';

const db = await createPgliteDb();
try {
  writeFileSync(new URL('../docs/api.md', import.meta.url), await apiReferenceMarkdown(db));
  process.stdout.write('wrote docs/api.md\n');
} finally {
  await db.close();
}
