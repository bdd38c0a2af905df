import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInboxWorker, type InboxWorker } from '../src/worker/worker.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/**
 * A source whose retry backoff puts the next attempt beyond the timestamp range (set behind the
 * configuration's bound) must not roll back its batch: the healthy source's deliveries in the same
 * batch are forwarded once and recorded done, and the bad ones are recorded dead.
 */
describe('worker: an outcome the store refuses is isolated', () => {
  let t: TestDb;
  let server: Server;
  let worker: InboxWorker;
  const forwarded: Record<string, string[]> = { '/ok': [], '/fail': [] };

  beforeAll(async () => {
    t = await createTestDb();
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        forwarded[req.url ?? '']?.push(String(req.headers['x-tekil-event-id']));
        res.writeHead(req.url === '/ok' ? 204 : 500).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = workerTestConfig({ worker: { batch_size: 50, concurrency: 1, lease: '30s', poll_interval: '1s' } }, {});
    const source = config.sources['shop-paymos']!;
    config.sources.healthy = { ...source, ordering: undefined, forward: { url: `${base}/ok`, timeout: 2_000, secret: SECRET, max_in_flight: 64 } };
    // Past the configuration's bound (30d), as no configuration file can say any more.
    config.sources.broken = {
      ...source,
      ordering: undefined,
      retry: { max_attempts: 5, base: 1e300, cap: 1e300 },
      forward: { url: `${base}/fail`, timeout: 2_000, secret: SECRET, max_in_flight: 64 },
    };
    worker = createInboxWorker(testContext(t.db, config));
  });
  afterAll(async () => {
    await worker?.stop();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await t?.close();
  });

  it('forwards the healthy deliveries once, records them done, and the bad ones dead', async () => {
    const insert = (source: string, eventId: string) =>
      t.db.query(`INSERT INTO inbox_deliveries (source, event_id, event_type, body, content_type) VALUES ($1, $2, 'invoice.paid', $3, 'application/json')`, [
        source,
        eventId,
        Buffer.from(`{"event_id":"${eventId}"}`),
      ]);
    for (let i = 0; i < 20; i++) await insert('healthy', `ok_${i}`);
    for (let i = 0; i < 3; i++) await insert('broken', `bad_${i}`);

    expect(await worker.runOnce()).toBe(23);
    // Nothing is left to claim: every outcome was recorded by that one batch.
    expect(await worker.runOnce()).toBe(0);

    expect(forwarded['/ok']!.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `ok_${i}`).sort());
    expect(forwarded['/fail']).toHaveLength(3);
    const { rows } = await t.db.query<{ source: string; status: string; last_error: string | null; n: number }>(
      'SELECT source, status, last_error, count(*)::int AS n FROM inbox_deliveries GROUP BY 1, 2, 3 ORDER BY 1',
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ source: 'broken', status: 'dead', n: 3 });
    expect(rows[0]!.last_error).toMatch(/^.*HTTP 500.*; the store refused this outcome \(SQLSTATE 22\d{3}; .*\); dead$/);
    expect(rows[1]).toEqual({ source: 'healthy', status: 'done', last_error: null, n: 20 });
  });
});
