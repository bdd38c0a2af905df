import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { migrate } from '../src/store/migrate.js';

describe('store', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is migrated and migrating again applies nothing', async () => {
    expect(await migrate(t.db)).toEqual([]);
    const { rows } = await t.db.query<{ name: string }>('SELECT name FROM tekil_migrations ORDER BY id');
    expect(rows[0]?.name).toBe('001_inbox');
  });

  it('round-trips raw bytes and rolls back a failed transaction', async () => {
    const body = Buffer.from([0, 1, 2, 255, 0x7b, 0x7d]);
    await t.db.query('INSERT INTO inbox_deliveries (source, event_id, body) VALUES ($1, $2, $3)', ['s', 'e1', body]);
    const { rows } = await t.db.query<{ body: Uint8Array }>('SELECT body FROM inbox_deliveries WHERE event_id = $1', ['e1']);
    expect(Buffer.from(rows[0]!.body).equals(body)).toBe(true);
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query('INSERT INTO inbox_deliveries (source, event_id, body) VALUES ($1, $2, $3)', ['s', 'e2', body]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const after = await t.db.query('SELECT 1 FROM inbox_deliveries WHERE event_id = $1', ['e2']);
    expect(after.rows).toHaveLength(0);
  });

  it('round-trips every byte value as a parameter and as a result, from a view into a larger buffer and as text input', async () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const backing = Buffer.concat([Buffer.from('before'), all, Buffer.from('after')]);
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 6, 256); // a subarray: its offset must be honoured
    await t.db.query('INSERT INTO inbox_deliveries (source, event_id, body) VALUES ($1, $2, $3), ($1, $4, $5), ($1, $6, $7)', [
      'bytes',
      'view',
      view,
      'empty',
      Buffer.alloc(0),
      'text',
      '\\x00ff7b',
    ]);
    const { rows } = await t.db.query<{ event_id: string; body: Uint8Array; same: boolean }>(
      `SELECT event_id, body, body = $1 AS same FROM inbox_deliveries WHERE source = 'bytes' ORDER BY event_id`,
      [all],
    );
    expect(rows.map((r) => [r.event_id, Buffer.from(r.body).toString('hex')])).toEqual([
      ['empty', ''],
      ['text', '00ff7b'],
      ['view', all.toString('hex')],
    ]);
    expect(rows.find((r) => r.event_id === 'view')!.same).toBe(true); // the bytes Postgres stored, not only what came back
    expect(rows.every((r) => r.body instanceof Uint8Array)).toBe(true);
  });

  it("counts rows as the statement's command tag does on every store (node-postgres' rowCount)", async () => {
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, body, status) VALUES ('rc', 'a', '\\x7b7d', 'done'), ('rc', 'b', '\\x7b7d', 'done'), ('rc', 'c', '\\x7b7d', 'done')`,
    );
    expect((await t.db.query(`UPDATE inbox_deliveries SET attempts = 1 WHERE source = 'rc'`)).rowCount).toBe(3);
    expect((await t.db.query(`SELECT 1 FROM inbox_deliveries WHERE source = 'rc' AND event_id <> 'a'`)).rowCount).toBe(2);
    // A SELECT over a data-modifying CTE counts the rows it returns, not the rows the CTE changed.
    const deleted = await t.db.query(
      `WITH d AS (DELETE FROM inbox_deliveries WHERE source = 'rc' RETURNING event_id) SELECT event_id FROM d WHERE event_id = 'a'`,
    );
    expect(deleted.rowCount).toBe(1);
  });

  it('queues every new pending delivery in the inserting statement; duplicates and settled rows queue nothing', async () => {
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, body, status) VALUES
         ('q', 'a', 'r1', '\\x7b7d', 'pending'), ('q', 'b', NULL, '\\x7b7d', 'done'), ('q', 'c', 'r2', '\\x7b7d', 'dead')`,
    );
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, body) VALUES ('q', 'a', '\\x00') ON CONFLICT DO NOTHING`);
    const queued = await t.db.query<{ event_id: string; dead: boolean; attempts: number }>(
      "SELECT event_id, dead, attempts FROM inbox_queue WHERE source = 'q' ORDER BY event_id",
    );
    expect(queued.rows).toEqual([
      { event_id: 'a', dead: false, attempts: 0 },
      { event_id: 'c', dead: true, attempts: 0 },
    ]);
  });

  it('deleting or truncating records removes their queue rows', async () => {
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, body) VALUES ('gone', 'x', '\\x7b7d'), ('gone', 'y', '\\x7b7d')`);
    await t.db.query(`DELETE FROM inbox_deliveries WHERE source = 'gone' AND event_id = 'x'`);
    const left = await t.db.query<{ event_id: string }>("SELECT event_id FROM inbox_queue WHERE source = 'gone'");
    expect(left.rows).toEqual([{ event_id: 'y' }]);
    // The event can be recorded (and queued) again.
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, body) VALUES ('gone', 'x', '\\x7b7d')`);
    await t.db.query('TRUNCATE inbox_deliveries');
    const after = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbox_queue');
    expect(after.rows[0]!.n).toBe(0);
  });

  it('refuses to listen on a channel name that is not a plain identifier (it is put into the SQL text)', async () => {
    await expect(t.db.listen('bad"; DROP TABLE x; --', () => {})).rejects.toMatchObject({ code: 'INVALID_IDENTIFIER' });
  });
});
