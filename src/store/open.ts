import { mkdirSync } from 'node:fs';
import type { Db } from './db.js';
import { createThreadedPgliteDb } from './pglite-thread.js';
import { createPostgresDb } from './postgres.js';

// Apart from db.ts (the interface every module imports) so the adapters import the interface and this
// file imports the adapters: no cycle between them.
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

/** Opens the store the settings point at: a Postgres pool, or the embedded store under `dataDir`. */
export async function openStore(options: OpenStoreOptions): Promise<Db> {
  if (options.databaseUrl) {
    return createPostgresDb({
      connectionString: options.databaseUrl,
      max: options.poolSize,
      preparedStatements: options.preparedStatements,
      disableJit: options.disableJit,
    });
  }
  const dir = options.dataDir ?? './.tekil';
  mkdirSync(dir, { recursive: true });
  // On its own thread: the event loop stays free for HTTP while PGlite runs a statement.
  return createThreadedPgliteDb({ dataDir: `${dir.replace(/\/$/, '')}/pgdata` });
}

/** The parts of the settings and the configuration that say which store to open, and how. */
export interface StoreSettings {
  databaseUrl?: string | undefined;
  dataDir: string;
}
export interface StoreConfig {
  store: { pool_size: number; prepared_statements: boolean; disable_jit: boolean };
}

/** Opens the store the settings point at, with the configuration's connection options. */
export function openConfiguredStore(settings: StoreSettings, config: StoreConfig, poolSize = config.store.pool_size): Promise<Db> {
  const { prepared_statements: preparedStatements, disable_jit: disableJit } = config.store;
  return openStore({ databaseUrl: settings.databaseUrl, dataDir: settings.dataDir, poolSize, preparedStatements, disableJit });
}
