import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { buildListApi, type InvoiceListPage } from '../src/simulate/list-api.js';
import { insertInvoices } from '../src/store/sql/simulate/invoices.js';

const KEY = 'sk_list_test';
const COUNT = 230;

/** The provider list API over a real socket: paging while invoices change, filters, auth, 429. */
describe('simulator list API', () => {
  let t: TestDb;
  const apps: ReturnType<typeof buildListApi>[] = [];
  const listen = async (rateLimit: number) => {
    const app = buildListApi({ db: t.db, apiKey: KEY, rateLimit });
    apps.push(app);
    return `${await app.listen({ host: '127.0.0.1', port: 0 })}/v1/invoices`;
  };
  const get = async (url: string, key = KEY) => {
    const res = await request(url, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as InvoiceListPage & { error?: { type: string } } };
  };

  beforeAll(async () => {
    t = await createTestDb();
    const ids = Array.from({ length: COUNT }, (_, i) => `inv_list_${String(i).padStart(4, '0')}`);
    const at = ids.map((_, i) => new Date(Date.UTC(2026, 10, 30, 0, 0, i)));
    await insertInvoices.run(t.db, {
      ids,
      orderIds: ids.map((id) => id.replace('inv_', 'ord_')),
      statuses: ids.map((_, i) => (i % 3 === 0 ? 'paid' : i % 3 === 1 ? 'paid_over' : 'expired')),
      amounts: ids.map(() => '10.00'),
      paidAmounts: ids.map(() => '10.00'),
      currencies: ids.map(() => 'TRY'),
      updatedAt: at,
    });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await t?.close();
  });

  it('pages return every invoice once even when invoices change between pages', async () => {
    const url = await listen(0);
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const res = await get(`${url}?limit=40${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((i) => i.id));
      cursor = res.body.next_cursor;
      // Between pages the provider moves invoices on: earlier ones and later ones alike.
      if (page++ === 1) await t.db.query(`UPDATE sim_invoices SET status = 'paid', updated_at = now() WHERE id IN ('inv_list_0001', 'inv_list_0200')`);
    } while (cursor);
    expect(seen.length).toBe(COUNT);
    expect(new Set(seen).size).toBe(COUNT);
  });

  it('filters by repeated status and by updated time; refuses a wrong key and bad input', async () => {
    const url = await listen(0);
    const paid = await get(`${url}?status=paid&status=paid_over&limit=500`);
    expect(paid.body.items.every((i) => i.status === 'paid' || i.status === 'paid_over')).toBe(true);
    const window = await get(`${url}?updated_since=2026-11-30T00:00:10Z&updated_until=2026-11-30T00:00:20Z&limit=500`);
    expect(window.body.items.map((i) => i.id)).toEqual(
      Array.from({ length: 10 }, (_, i) => `inv_list_${String(i + 10).padStart(4, '0')}`).filter((id) => id !== 'inv_list_0001'),
    );
    expect((await get(url, 'sk_wrong')).status).toBe(401);
    const bad = await get(`${url}?limit=0&status=refunded`);
    expect(bad.status).toBe(400);
    const forged = await get(`${url}?cursor=${Buffer.from('["a","b"]').toString('base64url')}`);
    expect(forged).toMatchObject({ status: 400, body: { error: { type: 'invalid_request_error' } } });
    expect(bad.body.error?.type).toBe('invalid_request_error');
  });

  it('answers 429 with Retry-After past its rate', async () => {
    const url = await listen(2);
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await get(`${url}?limit=1`));
    const limited = answers.find((a) => a.status === 429);
    expect(limited).toBeDefined();
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited!.body.error?.type).toBe('rate_limit_error');
  });
});
