import { defineStatement, type NoParams } from './statement.js';

/** The migrator's statements (src/store/migrate.ts); a migration's own script runs as a script (exec). */

export const migrationLock = defineStatement<{ key: number }, never>('tekil_migration_lock', 'SELECT pg_advisory_xact_lock($key)');

export const createMigrationsTable = defineStatement<NoParams, never>(
  'tekil_create_migrations_table',
  `CREATE TABLE IF NOT EXISTS tekil_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
);

export const migrationApplied = defineStatement<{ id: number }, { applied: number }>(
  'tekil_migration_applied',
  'SELECT 1 AS applied FROM tekil_migrations WHERE id = $id',
);

export const recordMigration = defineStatement<{ id: number; name: string }, never>(
  'tekil_record_migration',
  'INSERT INTO tekil_migrations (id, name) VALUES ($id, $name)',
);
