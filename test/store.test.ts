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
});
