// The benchmarks' Postgres plumbing: which server, and a fresh database per run, dropped afterwards.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** TEKIL_BENCH_DATABASE_URL, else TEKIL_TEST_DATABASE_URL, else the local server. */
export const benchServerUrl = process.env.TEKIL_BENCH_DATABASE_URL ?? process.env.TEKIL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The connection string of database `name` on the bench server. */
export function databaseUrl(name: string): string {
  const u = new URL(benchServerUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs one statement on the server's maintenance database (CREATE / DROP DATABASE). */
export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: benchServerUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export function freshDatabaseName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

/** Creates a database, hands its URL to `fn`, and drops it afterwards whatever happens. */
export async function withFreshDatabase<T>(prefix: string, fn: (url: string, name: string) => Promise<T>): Promise<T> {
  const name = freshDatabaseName(prefix);
  await adminQuery(`CREATE DATABASE ${name}`);
  try {
    return await fn(databaseUrl(name), name);
  } finally {
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}
