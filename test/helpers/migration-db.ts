import { randomBytes } from 'node:crypto';
import { adminQuery, onPostgres, postgresUrl } from './db.js';
import type { Db } from '../../src/store/db.js';
import { loadMigrations } from '../../src/store/migrate.js';
import { createPgliteDb } from '../../src/store/pglite.js';
import { createPostgresDb } from '../../src/store/postgres.js';

/** Stores at an older migration, for the tests that upgrade one holding data. */

/** An empty database (no migration at all): in memory on PGlite, a new database on Postgres. */
export async function createEmptyDb(): Promise<{ db: Db; close(): Promise<void> }> {
  if (!onPostgres) {
    const db = await createPgliteDb();
    return { db, close: () => db.close() };
  }
  if (!postgresUrl) throw new Error('TEKIL_TEST_STORE=postgres needs TEKIL_TEST_DATABASE_URL');
  const name = `tekil_mig_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const db = createPostgresDb({ connectionString: url.toString(), max: 4 });
  return {
    db,
    async close() {
      await db.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Applies migrations up to `lastId` and records them as migrate() does, so migrate() skips them. */
export async function migrateUpTo(db: Db, lastId: number): Promise<void> {
  await db.exec(`CREATE TABLE IF NOT EXISTS tekil_migrations (
    id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  for (const m of await loadMigrations()) {
    if (m.id > lastId) continue;
    await db.transaction(async (tx) => {
      await tx.exec(m.sql);
      await tx.query('INSERT INTO tekil_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
    });
  }
}
