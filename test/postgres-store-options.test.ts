import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import type { Db, Queryable } from '../src/store/db.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { insertDeliveries, type InboxDeliveryRow } from '../src/store/sql/inbox/insert-deliveries.js';

const NAMED_SQL = 'SELECT $1::int + 1 AS next, current_setting($2) AS setting';

async function preparedNamed(tx: Queryable, name: string): Promise<string[]> {
  const res = await tx.query<{ name: string }>('SELECT name FROM pg_prepared_statements WHERE name = $1', [name]);
  return res.rows.map((r) => r.name);
}

/** The Postgres adapter's connection options: JIT off on every connection, named prepared statements. */
describe.skipIf(!onPostgres)('postgres store options', () => {
  let t: TestDb;
  let prepared: Db;
  let unprepared: Db;

  beforeAll(async () => {
    t = await createTestDb();
    prepared = createPostgresDb({ connectionString: t.url!, max: 2 });
    unprepared = createPostgresDb({ connectionString: t.url!, max: 2, preparedStatements: false });
  });
  afterAll(async () => {
    await prepared?.close();
    await unprepared?.close();
    await t?.close();
  });

  // The server's own default is jit = on (Postgres' default): off here comes from the adapter.
  it('runs every pooled connection with jit off', async () => {
    const pooled = await prepared.query<{ jit: string }>('SHOW jit');
    expect(pooled.rows[0]!.jit).toBe('off');
    const inTransaction = await prepared.transaction((tx) => tx.query<{ jit: string }>('SHOW jit'));
    expect(inTransaction.rows[0]!.jit).toBe('off');
  });

  it('runs a named query again with other parameters, on the pool and inside a transaction', async () => {
    const first = await prepared.query<{ next: number; setting: string }>(NAMED_SQL, [1, 'jit'], { name: 'x' });
    const second = await prepared.query<{ next: number; setting: string }>(NAMED_SQL, [41, 'application_name'], { name: 'x' });
    expect(first.rows).toEqual([{ next: 2, setting: 'off' }]);
    expect(second.rows).toEqual([{ next: 42, setting: 'tekil' }]);

    const inside = await prepared.transaction(async (tx) => {
      const a = await tx.query<{ next: number }>(NAMED_SQL, [10, 'jit'], { name: 'x' });
      const b = await tx.query<{ next: number }>(NAMED_SQL, [20, 'jit'], { name: 'x' });
      return [a.rows[0]!.next, b.rows[0]!.next];
    });
    expect(inside).toEqual([11, 21]);
  });

  it('prepares the named statement on the connection by default', async () => {
    const names = await prepared.transaction(async (tx) => {
      await tx.query(NAMED_SQL, [1, 'jit'], { name: 'x' });
      return preparedNamed(tx, 'x');
    });
    expect(names).toEqual(['x']);
  });

  it('with prepared statements off, runs the named query unnamed: nothing is prepared', async () => {
    const result = await unprepared.transaction(async (tx) => {
      const a = await tx.query<{ next: number }>(NAMED_SQL, [1, 'jit'], { name: 'x' });
      const b = await tx.query<{ next: number }>(NAMED_SQL, [2, 'jit'], { name: 'x' });
      return { values: [a.rows[0]!.next, b.rows[0]!.next], names: await preparedNamed(tx, 'x') };
    });
    expect(result).toEqual({ values: [2, 3], names: [] });
    const pooled = await unprepared.query<{ next: number }>(NAMED_SQL, [7, 'jit'], { name: 'x' });
    expect(pooled.rows[0]!.next).toBe(8);
  });

  // The receiver's group-commit INSERT: parsing and planning it on every batch cost Postgres about a
  // fifth of the batch (docs/performance.md), so it is prepared like the worker's statements.
  it("prepares the receiver's batch INSERT once per connection, and leaves it unnamed with prepared statements off", async () => {
    const row = (eventId: string): InboxDeliveryRow => ({
      source: 'shop',
      eventId,
      resourceId: null,
      eventType: 'invoice.paid',
      occurredAt: null,
      body: Buffer.from(`{"id":"${eventId}"}`),
      contentType: 'application/json',
      headers: '{}',
    });
    const one = createPostgresDb({ connectionString: t.url!, max: 1 });
    const oneUnprepared = createPostgresDb({ connectionString: t.url!, max: 1, preparedStatements: false });
    try {
      expect((await insertDeliveries(one, [row('evt_p1'), row('evt_p2')])).inserted.size).toBe(2);
      expect((await insertDeliveries(one, [row('evt_p2'), row('evt_p3')])).inserted.size).toBe(1);
      const named = await one.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE statement LIKE '%INSERT INTO inbox_deliveries%'");
      expect(named.rows.map((r) => r.name)).toEqual(['inbox_insert_deliveries']);

      expect((await insertDeliveries(oneUnprepared, [row('evt_p3'), row('evt_p4')])).inserted.size).toBe(1);
      const none = await oneUnprepared.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements');
      expect(none.rows[0]!.n).toBe(0);
    } finally {
      await one.close();
      await oneUnprepared.close();
    }
  });
});
