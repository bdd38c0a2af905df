import { createHash, randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Db } from '../../src/store/db.js';
import { createPostgresDb } from '../../src/store/postgres.js';
import { createThreadedPgliteDb } from '../../src/store/pglite-thread.js';
import { loadMigrations, migrate } from '../../src/store/migrate.js';

/**
 * Which store the current vitest project runs against. `npm test` runs every file twice: once on
 * PGlite and, when TEKIL_TEST_DATABASE_URL is set, once on a real Postgres server.
 */
export const testStore = (process.env.TEKIL_TEST_STORE ?? 'pglite') as 'pglite' | 'postgres';
export const postgresUrl = process.env.TEKIL_TEST_DATABASE_URL;
export const onPostgres = testStore === 'postgres';

export interface TestDb {
  db: Db;
  /** Connection string of this test's own database (Postgres only). */
  url: string | undefined;
  close(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** One statement on the test server's maintenance database (CREATE / DROP DATABASE). */
export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let templateName: Promise<string> | undefined;

async function migrationsHash(): Promise<string> {
  const migrations = await loadMigrations();
  return createHash('sha256')
    .update(migrations.map((m) => m.name + m.sql).join('\n'))
    .digest('hex')
    .slice(0, 12);
}

/**
 * A fresh PGlite takes seconds to initialise; loading a dump of an already-migrated one takes a
 * fraction of that. The dump is cached in the temp dir per migration set and shared by test files.
 * Tests run the embedded store as tekil does: PGlite on its own thread.
 */
async function createMigratedPglite(): Promise<Db> {
  const file = join(tmpdir(), `tekil-pglite-${await migrationsHash()}.tar`);
  let dump: Buffer | undefined;
  try {
    dump = await readFile(file);
  } catch {
    // not built yet: built below
  }
  if (dump) return createThreadedPgliteDb({ loadDataDir: new Uint8Array(dump.buffer, dump.byteOffset, dump.byteLength) });
  const db = await createThreadedPgliteDb();
  await migrate(db);
  const tmp = `${file}.${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, await db.dump());
  await rename(tmp, file);
  return db;
}

/** A migrated template database, built once per migration set and shared by all test files. */
async function ensureTemplate(): Promise<string> {
  const name = `tekil_tpl_${await migrationsHash()}`;
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    // Test files start in parallel: one builds the template, the others wait on this lock.
    await client.query('SELECT pg_advisory_lock(88012)');
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rows.length === 0) {
      const building = `${name}_build_${randomBytes(3).toString('hex')}`;
      await client.query(`CREATE DATABASE ${building}`);
      const db = createPostgresDb({ connectionString: withDatabase(postgresUrl!, building), max: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    }
    await client.query('SELECT pg_advisory_unlock(88012)');
  } finally {
    await client.end();
  }
  return name;
}

/** A fresh, migrated database for one test file: a template copy on Postgres, in memory on PGlite. */
export async function createTestDb(options: { poolSize?: number } = {}): Promise<TestDb> {
  if (!onPostgres) {
    const db = await createMigratedPglite();
    return { db, url: undefined, close: () => db.close() };
  }
  if (!postgresUrl) throw new Error('TEKIL_TEST_STORE=postgres needs TEKIL_TEST_DATABASE_URL');
  templateName ??= ensureTemplate();
  const template = await templateName;
  const name = `tekil_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  const url = withDatabase(postgresUrl, name);
  const db = createPostgresDb({ connectionString: url, max: options.poolSize ?? 10 });
  return {
    db,
    url,
    async close() {
      await db.close();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
