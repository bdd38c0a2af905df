import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { countRows, receiverApp } from './helpers/receiver.js';

const SECRET = 'a5LTqfkBxIy7f+f8AHEoRBb6+nAJ/iyxJlkvbDmIGM==';
const NEXT_SECRET = 'rotated-merchant-secret-key';

/** Papara's notification, as its merchant API sends it: the payment object, the merchant's secret key in it. */
function paparaBody(secret: string | undefined, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: 'c02a2df7-5cf5-43c7-9419-0f3a1b2c3d4e',
    createdAt: '2026-12-07T18:28:55.06',
    merchantId: '2f73fd0a-d480-4f6f-a2a3-5b6c7d8e9f00',
    userId: '82c0ad97-22fc-4a51-9607-1a2b3c4d5e6f',
    paymentMethod: 0,
    paymentMethodDescription: null,
    referenceId: 'ORDER-1234',
    orderDescription: 'Sipariş 1234',
    status: 1,
    statusDescription: null,
    amount: 75.5,
    fee: 0,
    currency: 0,
    notificationUrl: 'https://shop.example/in/papara',
    notificationDone: false,
    ...(secret === undefined ? {} : { merchantSecretKey: secret }),
    ...overrides,
  });
}

/** Papara's notification through the real HTTP receiver: the secret key in the body, compared in constant time. */
describe('Papara through the HTTP receiver', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    t = await createTestDb();
    const config = parseConfig({ sources: { papara: { scheme: 'papara', secrets: [SECRET, NEXT_SECRET] } } });
    ({ app } = await receiverApp(t.db, config));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });
  beforeEach(async () => {
    await t.db.query('DELETE FROM inbox_deliveries');
  });

  const post = async (body: string) => {
    const res = await fetch(`${url}/in/papara`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    return { status: res.status, json: (await res.json()) as { status?: string; error?: string } };
  };

  it('accepts the key of either secret (a rotation), once per payment and status; a copy is a duplicate', async () => {
    expect(await post(paparaBody(SECRET))).toMatchObject({ status: 200, json: { status: 'accepted' } });
    expect(await post(paparaBody(SECRET))).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect(await post(paparaBody(NEXT_SECRET, { status: 2 }))).toMatchObject({ status: 200, json: { status: 'accepted' } });
    const { rows } = await t.db.query<{ event_id: string; resource_id: string }>('SELECT event_id, resource_id FROM inbox_deliveries ORDER BY event_id');
    expect(rows).toEqual([
      { event_id: 'c02a2df7-5cf5-43c7-9419-0f3a1b2c3d4e:1', resource_id: 'ORDER-1234' },
      { event_id: 'c02a2df7-5cf5-43c7-9419-0f3a1b2c3d4e:2', resource_id: 'ORDER-1234' },
    ]);
  });

  it('refuses a wrong key, a key of another length, no key, and a body that is not JSON; stores nothing', async () => {
    expect(await post(paparaBody(SECRET.replace('a5', 'b5')))).toMatchObject({ status: 401, json: { error: 'SIGNATURE_INVALID' } });
    expect(await post(paparaBody(`${SECRET}x`))).toMatchObject({ status: 401, json: { error: 'SIGNATURE_INVALID' } });
    expect(await post(paparaBody(undefined))).toMatchObject({ status: 401, json: { error: 'SIGNATURE_MISSING' } });
    expect(await post(paparaBody(SECRET, { merchantSecretKey: 12345 }))).toMatchObject({ status: 401, json: { error: 'SIGNATURE_MALFORMED' } });
    expect(await post('merchantSecretKey=x')).toMatchObject({ status: 401 });
    expect(await countRows(t.db)).toBe(0);
  });
});
