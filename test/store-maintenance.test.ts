import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { receiverConfig, testContext } from './helpers/receiver.js';

/**
 * /readyz says when the store runs with autovacuum off (the Postgres on many CI images and on this
 * project's own test machines): tables never vacuumed nor analyzed. Ready either way; the details say it.
 * The embedded store has no autovacuum and says nothing here (tekil says at start that it is embedded).
 */
describe('/readyz reports autovacuum off in its details', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('matches the server: details with a warning when autovacuum is off, none on the embedded store', async () => {
    const app = await buildApp({ ctx: testContext(t.db, receiverConfig()), roles: new Set(['receiver']) });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { status: string; details?: { autovacuum: string; warning?: string } };
      expect(body.status).toBe('ready');
      if (!onPostgres) {
        expect(body.details).toBeUndefined();
        return;
      }
      const setting = (await t.db.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]!.autovacuum;
      expect(body.details?.autovacuum).toBe(setting);
      if (setting === 'off') expect(body.details?.warning).toMatch(/autovacuum off/);
      else expect(body.details?.warning).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
