import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';

const ADMIN = 'audit-refusals-admin-token';

interface RefusalRow {
  address: string;
  status: number;
  error_code: string | null;
  target: { token?: string };
  count: number;
}

/**
 * A refused credential used to cost one audit row each: one address with no token wrote 25,588 rows in
 * 20 s (110-120 million a day, kept at least 90 days). Refusals are counted per (address, token
 * fingerprint, route, outcome) and minute: one row per key and minute, with its count.
 */
describe('refusals in the audit trail', () => {
  let t: TestDb;
  let app: FastifyInstance;
  beforeAll(async () => {
    t = await createTestDb();
    const ctx = testContext(t.db, workerTestConfig({ audit: { sign_in: { failures: 5, window: '1m' } } }));
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  const refusals = async (address: string) =>
    (
      await t.db.query<RefusalRow>(
        `SELECT address, status, error_code, target, count FROM audit_events WHERE address = $1 AND route = '/api/v1/inbox' ORDER BY id`,
        [address],
      )
    ).rows;

  it('1,000 refused requests from one address write a handful of rows that count them all', async () => {
    const call = (token: string | undefined) =>
      app.inject({ method: 'GET', url: '/api/v1/inbox', headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, remoteAddress: '10.40.0.1' });
    for (let i = 0; i < 1000; i++) expect((await call(undefined)).statusCode).toBe(401);
    // A wrong token past the sign-in limit: five 401s, then 429s.
    for (let i = 0; i < 200; i++) await call('tko_wrongwrongwrongwrong');
    // The first refusal of each key is written before its answer, at once.
    const first = await refusals('10.40.0.1');
    expect(first.length).toBeGreaterThanOrEqual(3);
    expect(first.length).toBeLessThanOrEqual(6);
    // The rest are counted in memory and added every few seconds (and when the process stops).
    await app.close();
    const rows = await refusals('10.40.0.1');
    // A minute boundary during the run splits a key in two rows at most.
    expect(rows.length).toBeLessThanOrEqual(6);
    const sum = (pick: (r: RefusalRow) => boolean) => rows.filter(pick).reduce((n, r) => n + r.count, 0);
    expect(sum((r) => r.status === 401 && r.target.token === undefined)).toBe(1000);
    expect(sum((r) => r.status === 401 && r.target.token !== undefined)).toBe(5);
    expect(sum((r) => r.status === 429)).toBe(195);
    expect(rows.find((r) => r.status === 429)).toMatchObject({ error_code: 'SIGN_IN_LIMITED', target: { token: expect.stringMatching(/^sha256:/) } });
  }, 120_000);
});
