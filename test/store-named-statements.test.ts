import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../src/store/db.js';
import { pgErrorCode } from '../src/store/pg-error.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';

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

  it('is parsed once per session on the embedded store, and planned afresh on every run', async () => {
    if (onPostgres) return; // node-postgres prepares per pooled connection: which one answers is not fixed
    const text = 'SELECT event_id FROM inbox_queue WHERE next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT 1';
    for (let i = 0; i < 8; i++) await t.db.query(text, [new Date()], { name: 'tekil_test_once' });
    const { rows } = await t.db.query<{ statement: string; generic_plans: number; custom_plans: number }>(
      'SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE name = $1',
      ['tekil_test_once'],
    );
    // A generic plan would be kept while the queue grows: PGlite runs no autovacuum to refresh the
    // statistics that would make Postgres plan again (PGLITE_SESSION_SETUP).
    expect(rows).toEqual([{ statement: text, generic_plans: 0, custom_plans: 8 }]);
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
      const deadline = Date.now() + 5000;
      while (!received.includes('hello') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(received).toContain('hello');
    } finally {
      await unlisten();
    }
  });
});
