import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverApp, signPaymos } from './helpers/receiver.js';

// A provider sends one event to the settings URL and to an invoice's callback_url, with the same id.
// Deduplication holds only if both URLs reach one source: /in/<source>/<alias> is that source.
describe('POST /in/:source/:alias, a second URL of one source', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db));
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  const post = async (path: string, body: string) => {
    const res = await request(`${base}${path}`, { method: 'POST', body, headers: signPaymos(body) });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  };
  const stored = async (eventId: string) =>
    (await t.db.query<{ source: string }>('SELECT source FROM inbox_deliveries WHERE event_id = $1', [eventId])).rows.map((r) => r.source);

  it('the same event id at /in/shop and /in/shop/cb is stored once, under the source; the copy is a duplicate', async () => {
    const body = paymosBody('evt_alias_1');
    expect(await post('/in/shop', body)).toEqual({ status: 200, json: { status: 'accepted' } });
    expect(await post('/in/shop/cb', body)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(await stored('evt_alias_1')).toEqual(['shop']);
  });

  it('either URL may come first; any one segment is an alias; the source still verifies', async () => {
    const body = paymosBody('evt_alias_2');
    expect(await post('/in/shop/callback-url', body)).toEqual({ status: 200, json: { status: 'accepted' } });
    expect(await post('/in/shop', body)).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(await stored('evt_alias_2')).toEqual(['shop']);
    // A wrong secret is refused at the alias as at the source's own path.
    const forged = paymosBody('evt_alias_3');
    const res = await request(`${base}/in/shop/cb`, { method: 'POST', body: forged, headers: signPaymos(forged, { secret: 'whsec_not_the_one' }) });
    expect(res.statusCode).toBe(401);
    await res.body.dump();
    // An unknown source is unknown behind an alias too; deeper paths are not routes.
    expect((await post('/in/nope/cb', paymosBody('evt_alias_4'))).status).toBe(404);
    expect((await post('/in/shop/cb/more', paymosBody('evt_alias_5'))).status).toBe(404);
    expect(await stored('evt_alias_3')).toEqual([]);
  });
});
