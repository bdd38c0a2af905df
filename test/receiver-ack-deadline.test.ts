import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { countRows, paymosBody, receiverApp, receiverConfig, signPaymos } from './helpers/receiver.js';
import { waitUntil } from './helpers/wait.js';
import { slowUpload } from './helpers/raw-http.js';

/**
 * Providers give up after about 10 s and retry. A store that cannot commit (here: held by a lock the
 * test owns, so the INSERT waits) must not hold the request past `receiver.ack_deadline`: the answer
 * is 503 with Retry-After, and when the row commits later the provider's retry is a duplicate.
 */
describe('acknowledgement deadline', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db, receiverConfig({ receiver: { ack_deadline: '300ms' } })));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  /** Holds the inbox table until `release()` is called; resolves once the hold is in place. */
  async function holdInbox(): Promise<{ release(): Promise<void> }> {
    if (onPostgres) {
      const client = new pg.Client({ connectionString: t.url });
      await client.connect();
      await client.query('BEGIN');
      await client.query('LOCK TABLE inbox_deliveries IN SHARE MODE');
      return {
        async release() {
          await client.query('COMMIT');
          await client.end();
        },
      };
    }
    // PGlite is one connection: an open transaction makes every other statement wait.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const tx = t.db.transaction(async () => {
      held();
      await released;
    });
    await holding;
    return {
      async release() {
        release();
        await tx;
      },
    };
  }

  it('answers 503 with Retry-After past the deadline; the late commit makes the retry a duplicate', async () => {
    const body = paymosBody('evt_slow_store');
    const headers = signPaymos(body);
    const hold = await holdInbox();
    let res;
    try {
      res = await app.inject({ method: 'POST', url: '/in/shop', payload: body, headers });
    } finally {
      await hold.release();
    }
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({ error: 'ACK_DEADLINE_EXCEEDED' });

    // The INSERT that was waiting commits once the store moves again; the provider's retry then
    // finds the row.
    await waitUntil(async () => (await countRows(t.db, "event_id = 'evt_slow_store'")) === 1, 10_000, 'the late commit');
    const retry = await app.inject({ method: 'POST', url: '/in/shop', payload: body, headers });
    expect(retry.json()).toMatchObject({ status: 'duplicate' });

    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/tekil_inbox_deliveries_total\{source="shop",outcome="rejected",reason="ACK_DEADLINE_EXCEEDED"\} 1/);
  });

  it('measures from the body being received: a slow upload is answered 200, and so is its equally slow copy', async () => {
    const body = paymosBody('evt_slow_upload');
    const headers = Object.entries(signPaymos(body));
    // The upload takes about three times the deadline (300 ms); the commit itself is quick.
    const first = await slowUpload(url, { path: '/in/shop', headers, body, takesMs: 900 });
    expect(first.status, first.body).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ status: 'accepted' });
    const copy = await slowUpload(url, { path: '/in/shop', headers, body, takesMs: 900 });
    expect(copy.status, copy.body).toBe(200);
    expect(JSON.parse(copy.body)).toMatchObject({ status: 'duplicate' });
    expect(await countRows(t.db, "event_id = 'evt_slow_upload'")).toBe(1);
  });
});
