import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.js';
import { TekilError } from '../errors.js';
import { pgErrorCode } from '../pg-error.js';
import { createMigrationsTable, migrationApplied, migrationLock, recordMigration } from './sql/migrations.js';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));
// Any fixed number works; it only has to be the same in every tekil process.
const MIGRATION_LOCK = 721_693_104;

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(migrationsDir)).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      id: Number(file.slice(0, 3)),
      name: file.replace(/\.sql$/, ''),
      sql: await readFile(migrationsDir + file, 'utf8'),
    })),
  );
}

/**
 * Forward-only migrations. Each runs in its own transaction holding a transaction-scoped advisory
 * lock, so several processes starting at once apply each migration exactly once.
 * Returns the names applied by this call.
 */
export async function migrate(db: Db, onStep?: (step: { done: number; total: number; name: string }) => void): Promise<string[]> {
  const migrations = await loadMigrations();
  // Created under the same lock as the migrations: concurrent CREATE TABLE IF NOT EXISTS can collide.
  await db.transaction(async (tx) => {
    await migrationLock.run(tx, { key: MIGRATION_LOCK });
    await createMigrationsTable.run(tx);
  });
  const applied: string[] = [];
  for (const [i, m] of migrations.entries()) {
    // Told before each one: on a large store one migration can take minutes (the CLI's progress line).
    onStep?.({ done: i, total: migrations.length, name: m.name });
    await db
      .transaction(async (tx) => {
        await migrationLock.run(tx, { key: MIGRATION_LOCK });
        const done = await migrationApplied.run(tx, { id: m.id });
        if (done.rows.length > 0) return;
        await tx.exec(m.sql);
        await recordMigration.run(tx, { id: m.id, name: m.name });
        applied.push(m.name);
      })
      .catch((err: unknown) => {
        const code = pgErrorCode(err);
        const reason = err instanceof Error ? err.message : String(err);
        throw new TekilError('MIGRATION_FAILED', `migration ${m.name} failed${code ? ` (SQLSTATE ${code})` : ''}: ${reason}`, { cause: err });
      });
  }
  onStep?.({ done: migrations.length, total: migrations.length, name: 'done' });
  return applied;
}
