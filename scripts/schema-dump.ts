import { writeFile } from 'node:fs/promises';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { createThreadedPgliteDb } from '../src/store/pglite-thread.js';
import { dumpSchema, SCHEMA_SNAPSHOT } from '../src/store/schema-dump.js';

/**
 * Writes src/store/schema.sql: every migration applied to an empty store, rendered by dumpSchema.
 * An in-memory embedded store by default; `--url postgres://…` renders an empty Postgres database
 * instead (the two render the same).
 */
const urlFlag = process.argv.indexOf('--url');
const url = urlFlag >= 0 ? process.argv[urlFlag + 1] : undefined;
const db = url ? createPostgresDb({ connectionString: url, max: 1 }) : await createThreadedPgliteDb();
try {
  await migrate(db);
  await writeFile(SCHEMA_SNAPSHOT, await dumpSchema(db));
  console.log(`wrote ${SCHEMA_SNAPSHOT}`);
} finally {
  await db.close();
}
