import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { adminQuery, onPostgres, postgresUrl } from './helpers/db.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { createThreadedPgliteDb } from '../src/store/pglite-thread.js';
import { dumpSchema, SCHEMA_DUMP_COMMAND, SCHEMA_SNAPSHOT } from '../src/store/schema-dump.js';

/** An empty store of this project's kind, migrated from nothing (not the tests' cached template). */
async function migrateEmptyStore(): Promise<{ db: Db; close(): Promise<void> }> {
  if (!onPostgres) {
    const db = await createThreadedPgliteDb();
    await migrate(db);
    return { db, close: () => db.close() };
  }
  const name = `tekil_schema_${randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl!);
  url.pathname = `/${name}`;
  const db = createPostgresDb({ connectionString: url.toString(), max: 1 });
  await migrate(db);
  return {
    db,
    async close() {
      await db.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

describe('schema snapshot', () => {
  // Migrating an empty embedded store takes a while on a loaded machine.
  it(`${SCHEMA_SNAPSHOT} is what every migration builds on an empty store`, { timeout: 120_000 }, async () => {
    const store = await migrateEmptyStore();
    try {
      const dumped = await dumpSchema(store.db);
      const checkedIn = await readFile(SCHEMA_SNAPSHOT, 'utf8');
      expect(dumped, `${SCHEMA_SNAPSHOT} differs from a freshly migrated store: run \`${SCHEMA_DUMP_COMMAND}\` and commit the result`).toBe(checkedIn);
      // The render reaches every kind of object the migrations make.
      for (const part of [
        'CREATE TABLE inbox_deliveries',
        'CONSTRAINT inbox_deliveries_pkey PRIMARY KEY',
        'CREATE INDEX inbox_queue_source_due',
        'CREATE VIEW inbox_attempts',
        'FUNCTION public.tekil_outbox_publish(',
        'CREATE TRIGGER inbox_deliveries_enqueue',
      ]) {
        expect(dumped).toContain(part);
      }
    } finally {
      await store.close();
    }
  });
});
