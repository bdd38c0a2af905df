import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Queryable } from '../src/store/db.js';
import { pgErrorCode } from '../src/pg-error.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { waitUntil } from './helpers/wait.js';
import { createPgliteDb } from '../src/store/pglite.js';
import { migrate } from '../src/store/migrate.js';
import { claimDueDeliveries } from '../src/worker/claim-due-deliveries.js';
import { claimDeliveries } from '../src/store/sql/outbox/claim-deliveries.js';
import { defineStatement } from '../src/store/sql/statement.js';

// Named statements (QueryOptions.name) on every store: node-postgres prepares them per connection;
// PGlite, whose query() has no names, through tekil's own protocol steps (src/store/pglite-prepared.ts).
describe('named statements', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  const ROUND_TRIP = `SELECT $1::bytea AS bytes, $2::text[] AS texts, $3::int AS n, $4::jsonb AS doc, $5::timestamptz AS at, $6::text AS nothing`;
  const name = 'tekil_test_round_trip';
  const params = [Buffer.from([0, 1, 254, 255]), ['a', 'b "quoted"', 'c,d'], 42, JSON.stringify({ k: [1, 'two'] }), '2026-12-02T08:00:00.000Z', null];

  function expectRoundTrip(row: Record<string, unknown>): void {
    expect(Buffer.from(row.bytes as Uint8Array).toString('hex')).toBe('0001feff');
    expect(row.texts).toEqual(['a', 'b "quoted"', 'c,d']);
    expect(row.n).toBe(42);
    expect(row.doc).toEqual({ k: [1, 'two'] });
    expect((row.at as Date).toISOString()).toBe('2026-12-02T08:00:00.000Z');
    expect(row.nothing).toBeNull();
  }

  it('gives the same values as an unnamed statement, on its own and in a transaction, every time', async () => {
    const unnamed = await t.db.query(ROUND_TRIP, params);
    expectRoundTrip(unnamed.rows[0]!);
    for (let i = 0; i < 7; i++) {
      // Past five runs Postgres may switch to a generic plan: the answers must not change.
      const res = await t.db.query(ROUND_TRIP, params, { name });
      expect(res.rowCount).toBe(1);
      expectRoundTrip(res.rows[0]!);
    }
    const inTx = await t.db.transaction((tx) => tx.query(ROUND_TRIP, params, { name }));
    expectRoundTrip(inTx.rows[0]!);
  });

  it('is parsed once per session on the embedded store', async () => {
    if (onPostgres) return; // node-postgres prepares per pooled connection: which one answers is not fixed
    const text = 'SELECT $1::int + 1 AS two';
    for (let i = 0; i < 3; i++) await t.db.query(text, [1], { name: 'tekil_test_once' });
    const { rows } = await t.db.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements WHERE name = $1', ['tekil_test_once']);
    expect(rows).toEqual([{ statement: text }]);
  });

  it('runs the claims unnamed on the embedded store: their plans follow the queue as it grows', async () => {
    if (onPostgres) return; // autovacuum's ANALYZE refreshes the plans of Postgres' prepared statements
    for (let i = 0; i < 7; i++) {
      await claimDueDeliveries(t.db, { limit: 64, leaseMs: 1000, token: 'tekil_test' });
      await claimDeliveries(t.db, 100, '30 seconds', 1000);
    }
    await t.db.query('SELECT $1::int AS n', [1], { name: 'tekil_test_size_dependent', sizeDependentPlan: true });
    // A generic plan made on an empty queue would have been kept as the queue grew (PGlite runs no
    // autovacuum): none of them may be a prepared statement of the session.
    const { rows } = await t.db.query<{ name: string }>(
      "SELECT name FROM pg_prepared_statements WHERE name LIKE '%claim%' OR name = 'tekil_test_size_dependent'",
    );
    expect(rows).toEqual([]);
  });

  it('runs a Statement with the plan it carries: prepared, replanned on the embedded store, or unnamed', async () => {
    const prepared = defineStatement<{ n: number }, { m: number }>('tekil_test_plan_prepared', 'SELECT $n::int + 1 AS m', 'prepared');
    const replanned = defineStatement<{ n: number }, { m: number }>('tekil_test_plan_replanned', 'SELECT $n::int + 2 AS m', 'prepared-replanned');
    const unnamed = defineStatement<{ n: number }, { m: number }>('tekil_test_plan_unnamed', 'SELECT $n::int + 3 AS m');
    for (let i = 0; i < 3; i++) {
      expect((await prepared.run(t.db, { n: 1 })).rows).toEqual([{ m: 2 }]);
      expect((await replanned.run(t.db, { n: 1 })).rows).toEqual([{ m: 3 }]);
      expect((await unnamed.run(t.db, { n: 1 })).rows).toEqual([{ m: 4 }]);
    }
    expect(await t.db.transaction((tx) => prepared.run(tx, { n: 41 }))).toMatchObject({ rows: [{ m: 42 }], rowCount: 1 });
    if (onPostgres) return; // which pooled connection holds a prepared statement is not fixed
    const { rows } = await t.db.query<{ name: string }>("SELECT name FROM pg_prepared_statements WHERE name LIKE 'tekil_test_plan_%' ORDER BY name");
    expect(rows).toEqual([{ name: 'tekil_test_plan_prepared' }]);
  });

  it('refuses a value that is not bytes or text for a bytea parameter, and the connection goes on', async () => {
    if (onPostgres) return; // node-postgres sends a number as its text
    await expect(t.db.query('SELECT $1::bytea AS b', [42], { name: 'tekil_test_bytea_input' })).rejects.toThrow(/bytea/);
    await expect(t.db.query('SELECT $1::bytea AS b', [[1, 2]])).rejects.toThrow(/bytea/);
    const { rows } = await t.db.query<{ b: Uint8Array }>('SELECT $1::bytea AS b', [Buffer.from('ok')], { name: 'tekil_test_bytea_input' });
    expect(Buffer.from(rows[0]!.b).toString()).toBe('ok');
  });

  it('refuses a second text under a name already used', async () => {
    if (onPostgres) return; // node-postgres' own check, per connection
    await t.db.query('SELECT 1 AS one', [], { name: 'tekil_test_one_text' });
    await expect(t.db.query('SELECT 2 AS two', [], { name: 'tekil_test_one_text' })).rejects.toThrow(/another text/);
  });

  it('reports a failure with its SQLSTATE and leaves the connection usable; a rolled-back transaction keeps the statement', async () => {
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, body) VALUES ('named', 'dup', '\\x7b7d')`);
    const insert = `INSERT INTO inbox_deliveries (source, event_id, body) VALUES ($1, $2, $3) RETURNING event_id`;
    const insertName = 'tekil_test_insert';
    // Prepared inside a transaction that fails and rolls back.
    const err = await t.db
      .transaction(async (tx: Queryable) => {
        await tx.query(insert, ['named', 'fresh', Buffer.from('{}')], { name: insertName });
        await tx.query(insert, ['named', 'dup', Buffer.from('{}')], { name: insertName });
      })
      .catch((e: unknown) => e);
    expect(pgErrorCode(err)).toBe('23505');
    // The rollback undid the row, not the statement; the connection answers the next statement.
    const again = await t.db.query<{ event_id: string }>(insert, ['named', 'fresh', Buffer.from('{}')], { name: insertName });
    expect(again.rows).toEqual([{ event_id: 'fresh' }]);
    // A failure outside a transaction, then the same statement succeeding.
    await expect(t.db.query(insert, ['named', 'dup', Buffer.from('{}')], { name: insertName })).rejects.toMatchObject({ code: '23505' });
    expect((await t.db.query(insert, ['named', 'later', Buffer.from('{}')], { name: insertName })).rowCount).toBe(1);
  });

  it('is prepared again after a parse that failed', async () => {
    const text = 'SELECT count(*)::int AS n FROM inbox_deliveries WHERE source = $1';
    const failing = t.db.transaction(async (tx) => {
      await tx.query('SELECT 1/0').catch(() => undefined); // the transaction is now aborted: the Parse below fails
      await tx.query(text, ['named'], { name: 'tekil_test_after_failure' });
    });
    await expect(failing).rejects.toMatchObject({ code: '25P02' });
    const res = await t.db.query<{ n: number }>(text, ['named'], { name: 'tekil_test_after_failure' });
    expect(res.rows[0]!.n).toBeGreaterThanOrEqual(0);
  });

  it('delivers a NOTIFY sent by a named statement outside a transaction', async () => {
    const received: string[] = [];
    const unlisten = await t.db.listen('tekil_named_test', (payload) => received.push(payload));
    try {
      await t.db.query("SELECT pg_notify('tekil_named_test', $1)", ['hello'], { name: 'tekil_test_notify' });
      await waitUntil(() => received.includes('hello'), 5_000, 'the notification');
      expect(received).toContain('hello');
    } finally {
      await unlisten();
    }
  });
});

// The same adapter without the thread (scripts and the ingest bench's store-only line use it).
describe.skipIf(onPostgres)('named statements on PGlite in this thread', () => {
  let db: Db;
  beforeAll(async () => {
    db = await createPgliteDb();
    await migrate(db);
  }, 60_000);
  afterAll(async () => db?.close());

  it('runs them on its own and in a transaction, prepared once, and refuses them once the transaction has ended', async () => {
    const text = 'SELECT $1::bytea AS bytes, $2::int + 1 AS n';
    const bytes = Buffer.from([0, 255, 7]);
    const alone = await db.query<{ bytes: Uint8Array; n: number }>(text, [bytes, 1], { name: 'tekil_test_in_thread' });
    expect([Buffer.from(alone.rows[0]!.bytes).equals(bytes), alone.rows[0]!.n]).toEqual([true, 2]);
    let ended: Queryable | undefined;
    const inTx = await db.transaction(async (tx) => {
      ended = tx;
      return tx.query<{ n: number }>(text, [bytes, 41], { name: 'tekil_test_in_thread' });
    });
    expect(inTx.rows[0]!.n).toBe(42);
    await expect(ended!.query(text, [bytes, 1], { name: 'tekil_test_in_thread' })).rejects.toThrow(/closed/);
    const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'tekil_test_in_thread'");
    expect(rows[0]!.n).toBe(1);
  });
});
