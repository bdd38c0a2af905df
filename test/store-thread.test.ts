import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreUnavailable, pgErrorCode, PG_UNIQUE_VIOLATION } from '../src/pg-error.js';
import { createThreadedPgliteDb } from '../src/store/pglite-thread.js';
import type { Db, Queryable } from '../src/store/db.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { waitUntil } from './helpers/wait.js';

/** The embedded store on its own thread: the same behaviour as PGlite in-process, off the event loop. */
describe.skipIf(onPostgres)('the embedded store on its own thread', () => {
  let t: TestDb;
  let db: Db & { dump(): Promise<Uint8Array> };
  beforeAll(async () => {
    // The suite's migrated store, loaded from its dump (the suite runs every PGlite test on this adapter).
    t = await createTestDb();
    db = t.db as typeof db;
    await db.exec('CREATE TABLE things (id int PRIMARY KEY, body bytea, at timestamptz)');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('keeps the event loop free while a long statement runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    // Hundreds of milliseconds of work inside PGlite (on the main thread this froze every timer).
    await db.query('SELECT count(*) FROM generate_series(1, 1000000) g WHERE g % 7 = 0');
    const took = performance.now() - started;
    clearInterval(timer);
    expect(took).toBeGreaterThan(50);
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(took / 5 / 4));
  });

  it('does not fill new WAL segments with zeros first (a pause for every statement behind it)', async () => {
    expect((await db.query<{ wal_init_zero: string }>('SHOW wal_init_zero')).rows[0]!.wal_init_zero).toBe('off');
  });

  it('carries bytes and times both ways, and the store errors with their SQLSTATE and constraint', async () => {
    const body = Buffer.from([0, 1, 2, 255]);
    const at = new Date('2026-12-01T10:00:00.123Z');
    await db.query('INSERT INTO things VALUES ($1, $2, $3)', [1, body, at]);
    const row = (await db.query<{ body: Uint8Array; at: Date }>('SELECT body, at FROM things WHERE id = 1')).rows[0]!;
    expect(Buffer.from(row.body)).toEqual(body);
    expect(row.at.toISOString()).toBe(at.toISOString());
    // A view into a bigger buffer (node's pool, a socket read) carries only its own bytes.
    const big = Buffer.alloc(64 * 1024, 7);
    await db.query('INSERT INTO things VALUES ($1, $2)', [2, big.subarray(100, 103)]);
    const viewed = (await db.query<{ body: Uint8Array }>('SELECT body FROM things WHERE id = 2')).rows[0]!;
    expect([...viewed.body]).toEqual([7, 7, 7]);
    const err = await db.query('INSERT INTO things VALUES (1)').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(pgErrorCode(err)).toBe(PG_UNIQUE_VIOLATION);
    expect((err as { constraint?: string }).constraint).toBe('things_pkey');
    expect(isStoreUnavailable(err)).toBe(false);
  });

  it('commits a transaction, rolls one back when its callback throws, and holds the connection to its end', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO things (id) VALUES (10)');
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO things (id) VALUES (11)');
        throw new Error('the handler failed');
      }),
    ).rejects.toThrow('the handler failed');
    // A statement outside waits for the open transaction: it sees both of its rows or neither.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: (tx: Queryable) => void;
    const halfway = new Promise<Queryable>((resolve) => (inside = resolve));
    const open = db.transaction(async (tx) => {
      await tx.query('INSERT INTO things (id) VALUES (12)');
      inside(tx);
      await held;
      await tx.query('INSERT INTO things (id) VALUES (13)');
    });
    const tx = await halfway;
    let outsideSettled = false;
    const outside = db.query<{ n: number }>('SELECT count(*)::int AS n FROM things WHERE id >= 12').finally(() => (outsideSettled = true));
    // The thread takes requests in order: once a statement of the transaction sent after the outside
    // one has answered, the outside one has reached the store and had its chance to run.
    await tx.query('SELECT 1');
    expect(outsideSettled).toBe(false);
    release();
    await open;
    expect((await outside).rows[0]!.n).toBe(2);
    const ids = (await db.query<{ id: number }>('SELECT id FROM things WHERE id BETWEEN 10 AND 13 ORDER BY id')).rows.map((r) => r.id);
    expect(ids).toEqual([10, 12, 13]);
    // A failed commit reaches the caller: a deferred constraint checked at COMMIT.
    await db.exec('CREATE TABLE parents (id int PRIMARY KEY); CREATE TABLE children (parent int REFERENCES parents DEFERRABLE INITIALLY DEFERRED)');
    const failed = await db.transaction(async (tx) => tx.query('INSERT INTO children VALUES (1)')).catch((e: unknown) => e);
    expect(pgErrorCode(failed)).toBe('23503');
    expect((await db.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('delivers a NOTIFY after its commit, to every subscriber until it unsubscribes', async () => {
    const got: string[] = [];
    const stopA = await db.listen('thread_test', (p) => got.push(`a:${p}`));
    const stopB = await db.listen('thread_test', (p) => got.push(`b:${p}`));
    await db.transaction(async (tx) => {
      await tx.query("NOTIFY thread_test, 'one'");
      expect(got).toEqual([]);
    });
    await waitUntil(() => got.length === 2, 5_000, 'both subscribers');
    expect(got.sort()).toEqual(['a:one', 'b:one']);
    await stopA();
    await db.query("NOTIFY thread_test, 'two'");
    await waitUntil(() => got.length === 3, 5_000, 'the remaining subscriber');
    expect(got[2]).toBe('b:two');
    await stopB();
  });

  it('keeps its data in a directory across a close and a reopen; once closed, a statement fails as unavailable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tekil-thread-'));
    try {
      // A new directory seeded from a dump (initialising an empty one takes seconds).
      const first = await createThreadedPgliteDb({ dataDir: join(dir, 'pgdata'), loadDataDir: await db.dump() });
      // It holds the dump's tables (the suite's migrated schema).
      expect((await first.query("SELECT to_regclass('inbox_deliveries') IS NOT NULL AS migrated")).rows).toEqual([{ migrated: true }]);
      await first.exec('CREATE TABLE kept (v text)');
      await first.query('INSERT INTO kept VALUES ($1)', ['still here']);
      await first.close();
      const err = await first.query('SELECT 1').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(isStoreUnavailable(err)).toBe(true);
      const second = await createThreadedPgliteDb({ dataDir: join(dir, 'pgdata') });
      expect((await second.query('SELECT v FROM kept')).rows).toEqual([{ v: 'still here' }]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
