import { mkdirSync } from 'node:fs';
import type { Db } from './db.js';
import { createPostgresDb } from './postgres.js';
import { createPgliteDb } from './pglite.js';

export interface OpenStoreOptions {
  /** Postgres connection string; when absent the embedded PGlite store is used. */
  databaseUrl?: string | undefined;
  /** Directory for the embedded store's files. */
  dataDir?: string | undefined;
  poolSize?: number | undefined;
  /** Named prepared statements for the hot queries (Postgres only; default true). */
  preparedStatements?: boolean | undefined;
  /** `jit = off` as a startup option (Postgres only; default true). */
  disableJit?: boolean | undefined;
}

export async function openStore(options: OpenStoreOptions): Promise<Db> {
  if (options.databaseUrl) return createPostgresDb({ connectionString: options.databaseUrl, max: options.poolSize, preparedStatements: options.preparedStatements, disableJit: options.disableJit });
  const dir = options.dataDir ?? './.tekil';
  mkdirSync(dir, { recursive: true });
  return createPgliteDb(`${dir.replace(/\/$/, '')}/pgdata`);
}
