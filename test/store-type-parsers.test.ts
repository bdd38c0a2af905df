import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tekil from '../src/index.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';

const BEYOND_DOUBLES = '9007199254740993'; // 2^53 + 1: a double cannot hold it

/**
 * tekil reads int8 as numbers on its own connections only: an application that imports tekil and
 * opens its own node-postgres pool still reads a bigint as the exact string node-postgres gives.
 */
describe.skipIf(!onPostgres)('postgres store: type parsers are tekil’s own', () => {
  let t: TestDb;
  let own: pg.Pool;

  beforeAll(async () => {
    expect(typeof tekil.publish).toBe('function'); // tekil is imported, its store module loaded
    t = await createTestDb();
    own = new pg.Pool({ connectionString: t.url!, max: 1 });
  });
  afterAll(async () => {
    await own?.end();
    await t?.close();
  });

  it("leaves an embedding application's pools alone", async () => {
    const { rows } = await own.query<{ n: unknown }>(`SELECT ${BEYOND_DOUBLES}::bigint AS n`);
    expect(rows[0]!.n).toBe(BEYOND_DOUBLES);
    expect(pg.types.getTypeParser(pg.types.builtins.INT8, 'text')('12')).toBe('12');
  });

  it("reads int8 as numbers on tekil's own pool, transactions and extra pools", async () => {
    expect((await t.db.query<{ n: unknown }>('SELECT count(*) AS n FROM outbox_messages')).rows[0]!.n).toBe(0);
    expect(await t.db.transaction(async (tx) => (await tx.query<{ n: unknown }>('SELECT 42::bigint AS n')).rows[0]!.n)).toBe(42);
    const extra = t.db.openPool({ applicationName: 'tekil-test', max: 1 });
    try {
      expect((await extra.query<{ n: unknown }>('SELECT 7::int8 AS n')).rows[0]!.n).toBe(7);
    } finally {
      await extra.close();
    }
  });
});
