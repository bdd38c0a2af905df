// bench:peers runs each peer as its own docs advise (docs/performance.md, "Against what you would build
// instead"). These checks keep it so: a later change that quietly weakens a peer fails here.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAIVE_INSERT, NAIVE_TABLE, NAIVE_TABLE_SQL } from '../bench/ingest/naive-table.js';
import { AttemptRows, INSERT_ATTEMPTS } from '../bench/peers/attempt-rows.js';
import { CompletionEnd } from '../bench/peers/latency.js';
import { PGBOSS_BATCH, pgbossRefetches, runPgBoss } from '../bench/peers/queues.js';
import { jobIdOf, TurnBatch } from '../bench/peers/turn-batch.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';

describe('bench:peers: every peer set up as its docs advise', () => {
  it("the pg-boss receiver's job id is the event's (a repeat gets the same id), and a turn's events go in one statement", async () => {
    expect(jobIdOf('paymos', 'evt_1')).toBe(jobIdOf('paymos', 'evt_1'));
    expect(jobIdOf('paymos', 'evt_1')).not.toBe(jobIdOf('paymos', 'evt_2'));
    expect(jobIdOf('paymos', 'evt_1')).not.toBe(jobIdOf('iyzico', 'evt_1'));
    expect(jobIdOf('paymos', 'evt_1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const writes: number[][] = [];
    const batch = new TurnBatch<number>(async (items) => writes.push(items));
    await Promise.all(Array.from({ length: 40 }, (_, i) => batch.add(i)));
    expect(writes).toEqual([Array.from({ length: 40 }, (_, i) => i)]);
  });

  it('the naive receiver and the insert peer use a named (prepared) statement on a plain table of their own', () => {
    expect(NAIVE_INSERT.name).toBeTruthy();
    expect(NAIVE_INSERT.text).toContain(`INSERT INTO ${NAIVE_TABLE} `);
    expect(NAIVE_TABLE_SQL).not.toMatch(/TRIGGER|NOTIFY/i);
    expect(INSERT_ATTEMPTS.name).toBeTruthy();
  });

  describe.skipIf(!onPostgres)('on Postgres', () => {
    let t: TestDb;
    let pool: pg.Pool;
    beforeAll(async () => {
      t = await createTestDb();
      pool = new pg.Pool({ connectionString: t.url, max: 4 });
    });
    afterAll(async () => {
      await pool?.end();
      await t?.close();
    });

    it('the naive table has no trigger (a NOTIFY per commit would serialise its connections)', async () => {
      await pool.query(NAIVE_TABLE_SQL);
      const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal', [
        NAIVE_TABLE,
      ]);
      expect(rows[0]!.n).toBe(0);
    });

    it("the send path's attempts of one turn go in one prepared INSERT", async () => {
      await pool.query(
        'CREATE TABLE IF NOT EXISTS peer_attempts (job_id text NOT NULL, status_code int, error text, attempted_at timestamptz NOT NULL DEFAULT now())',
      );
      const attempts = new AttemptRows(pool);
      await Promise.all(Array.from({ length: 50 }, (_, i) => attempts.add({ jobId: `job_${i}`, status: 200, error: null })));
      expect({ statements: attempts.statements, written: attempts.written }).toEqual({ statements: 1, written: 50 });
      const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM peer_attempts');
      expect(rows[0]!.n).toBe(50);
    });

    it('pg-boss fetches again at once when a batch comes back full (it would sleep a polling interval otherwise)', async () => {
      const before = pgbossRefetches.count;
      const payloads = Array.from({ length: PGBOSS_BATCH * 6 }, (_, i) => `{"i":${i}}`);
      const completions = new CompletionEnd();
      const dbName = new URL(t.url!).pathname.slice(1);
      const run = await runPgBoss({
        url: t.url!,
        dbName,
        pool,
        payloads,
        handle: async () => {},
        concurrency: 1,
        steady: { rate: 2, seconds: 1 },
        steadyPayload: (i, t0) => `{"i":${i},"t0":${t0}}`,
        end: completions,
        completions,
      });
      expect(run.rate).toBeGreaterThan(0);
      expect(pgbossRefetches.count - before).toBeGreaterThanOrEqual(2);
    }, 120_000);
  });
});
