import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { STANDARD_SECRET, countRows, paymosBody, receiverApp, signPaymos, signStandard } from './helpers/receiver.js';
import { rawRequest } from './helpers/raw-http.js';

/**
 * Requests as they arrive on the wire, written byte for byte on a real socket: odd Content-Type
 * values, a signature header sent twice, ids that a float round trip or UTF-8 would merge.
 */
describe('POST /in/:source on the wire', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });
  beforeEach(async () => {
    await t.db.query('DELETE FROM inbox_deliveries');
  });

  const lines = (headers: Record<string, string>, skip: string[] = []) =>
    Object.entries(headers).filter(([name]) => !skip.includes(name.toLowerCase())) as Array<[string, string]>;

  describe('a signed webhook is accepted whatever its Content-Type', () => {
    it.each([[''], [' '], ['text'], ['a, b'], [';'], ['application/json; charset']])('Content-Type "%s"', async (contentType) => {
      const id = `evt_ct_${Buffer.from(contentType).toString('hex') || 'empty'}`;
      const body = paymosBody(id);
      const res = await rawRequest(url, {
        path: '/in/shop',
        headers: [...lines(signPaymos(body), ['content-type']), ['Content-Type', contentType]],
        body,
      });
      expect(res.status, res.body).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ status: 'accepted' });
      const { rows } = await t.db.query<{ content_type: string | null }>('SELECT content_type FROM inbox_deliveries WHERE event_id = $1', [id]);
      expect(rows).toHaveLength(1);
    });

    it('still refuses a bad signature behind an odd Content-Type, and counts neither as INTERNAL', async () => {
      const body = paymosBody('evt_ct_bad');
      const res = await rawRequest(url, {
        path: '/in/shop',
        headers: [...lines(signPaymos(body, { secret: 'whsec_other' }), ['content-type']), ['Content-Type', 'a, b']],
        body,
      });
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body)).toMatchObject({ error: 'SIGNATURE_INVALID' });
      const metrics = await rawRequest(url, { method: 'GET', path: '/metrics', headers: [] });
      expect(metrics.body).not.toMatch(/tekil_inbox_deliveries_total\{[^}]*reason="INTERNAL"\}/);
    });
  });

  describe('a signature header sent on two lines', () => {
    const otherSecret = 'whsec_' + Buffer.from('another secret entirely!').toString('base64');
    const standard = (id: string, body: string) => signStandard(body, id)['webhook-signature']!;
    const standardWrong = (id: string, body: string) => signStandard(body, id, { secret: otherSecret })['webhook-signature']!;

    it.each([['first'], ['second']])('Standard Webhooks: the valid signature on the %s line', async (where) => {
      const id = `msg_two_${where}`;
      const body = JSON.stringify({ type: 'thing.happened', data: { id: 'r1' } });
      const headers = signStandard(body, id);
      const [good, bad] = [standard(id, body), standardWrong(id, body)];
      const sigLines: Array<[string, string]> =
        where === 'first'
          ? [
              ['webhook-signature', good],
              ['webhook-signature', bad],
            ]
          : [
              ['webhook-signature', bad],
              ['webhook-signature', good],
            ];
      const res = await rawRequest(url, { path: '/in/demo', headers: [...lines(headers, ['webhook-signature']), ...sigLines], body });
      expect(res.status, res.body).toBe(200);
      expect(await countRows(t.db, 'event_id = $1', [id])).toBe(1);
    });

    it.each([['first'], ['second']])('Paymos (t=…,v1=…): the valid signature on the %s line', async (where) => {
      const body = paymosBody(`evt_two_${where}`);
      const good = signPaymos(body)['X-Webhook-Signature']!;
      const bad = signPaymos(body, { secret: 'whsec_other' })['X-Webhook-Signature']!;
      const sigLines: Array<[string, string]> =
        where === 'first'
          ? [
              ['X-Webhook-Signature', good],
              ['X-Webhook-Signature', bad],
            ]
          : [
              ['X-Webhook-Signature', bad],
              ['X-Webhook-Signature', good],
            ];
      const res = await rawRequest(url, { path: '/in/shop', headers: [...lines(signPaymos(body), ['x-webhook-signature']), ...sigLines], body });
      expect(res.status, res.body).toBe(200);
    });

    it('two lines that are both wrong are still refused', async () => {
      const body = paymosBody('evt_two_bad');
      const bad = signPaymos(body, { secret: 'whsec_other' })['X-Webhook-Signature']!;
      const res = await rawRequest(url, {
        path: '/in/shop',
        headers: [...lines(signPaymos(body), ['x-webhook-signature']), ['X-Webhook-Signature', bad], ['X-Webhook-Signature', bad]],
        body,
      });
      expect(res.status).toBe(401);
      expect(STANDARD_SECRET).toBeTruthy();
    });
  });

  describe('event ids are read from the raw text', () => {
    const send = async (bodyText: string) => {
      const res = await rawRequest(url, { path: '/in/shop', headers: lines(signPaymos(bodyText), ['x-webhook-id']), body: bodyText });
      return { status: res.status, json: JSON.parse(res.body) as Record<string, unknown> };
    };
    const envelope = (idText: string, resourceText = '"inv_1"') =>
      `{"event_id": ${idText}, "event_type": "invoice.paid", "occurred_at": "2026-11-29T10:00:00Z", "data": {"invoice_id": ${resourceText}}}`;

    it('numbers above 2^53, and numbers written differently, stay distinct events', async () => {
      const ids = ['17960923835832100001', '17960923835832100003', '1e3', '1000', '1.50', '1.5', '-0', '0'];
      for (const id of ids) expect(await send(envelope(id))).toEqual({ status: 200, json: { status: 'accepted' } });
      expect(await send(envelope('17960923835832100003'))).toMatchObject({ status: 200, json: { status: 'duplicate' } });
      const { rows } = await t.db.query<{ event_id: string }>('SELECT event_id FROM inbox_deliveries ORDER BY event_id');
      expect(rows.map((r) => r.event_id).sort()).toEqual([...ids].sort());
    });

    it('a numeric resource id above 2^53 keeps its digits', async () => {
      expect((await send(envelope('"evt_big_resource"', '90071992547409930001'))).status).toBe(200);
      const { rows } = await t.db.query<{ resource_id: string }>("SELECT resource_id FROM inbox_deliveries WHERE event_id = 'evt_big_resource'");
      expect(rows[0]!.resource_id).toBe('90071992547409930001');
    });

    it('refuses an event id with a lone surrogate (it could not be stored without merging it with others)', async () => {
      for (const id of ['"x\\ud800"', '"x\\udbff"', '"\\udc00y"']) {
        const res = await send(envelope(id));
        expect(res.status).toBe(400);
        expect(res.json).toMatchObject({ error: 'EVENT_ID_INVALID' });
      }
      // A proper pair is a real character and fine.
      expect((await send(envelope('"x\\ud83d\\ude00"'))).status).toBe(200);
      expect(await countRows(t.db)).toBe(1);
    });

    it('refuses an event id that is not valid UTF-8 (decoded, "x\\xFF" and "x\\xFE" would both be "x\\uFFFD")', async () => {
      const bytes = (idBytes: number[]) =>
        Buffer.concat([Buffer.from('{"event_id": "x'), Buffer.from(idBytes), Buffer.from('", "event_type": "invoice.paid", "data": {"invoice_id": "inv_1"}}')]);
      for (const idBytes of [[0xff], [0xfe], [0xc3], [0xed, 0xa0, 0x80]]) {
        const body = bytes(idBytes);
        const res = await rawRequest(url, { path: '/in/shop', headers: lines(signPaymos(body), ['x-webhook-id']), body });
        expect(res.status, res.body).toBe(400);
        expect(JSON.parse(res.body)).toMatchObject({ error: 'EVENT_ID_INVALID' });
      }
      expect(await countRows(t.db)).toBe(0);
      // U+FFFD written as itself (or as \\ufffd) in a valid UTF-8 body is a real character and fine.
      expect((await send(envelope('"x\uFFFD"'))).json).toEqual({ status: 'accepted' });
      expect((await send(envelope('"y\\ufffd"'))).json).toEqual({ status: 'accepted' });
      // A resource id that is not valid UTF-8 is not a usable id: stored as null, as a lone surrogate is.
      const badResource = Buffer.concat([
        Buffer.from('{"event_id": "evt_bad_resource", "event_type": "invoice.paid", "data": {"invoice_id": "inv'),
        Buffer.from([0xff]),
        Buffer.from('"}}'),
      ]);
      const res = await rawRequest(url, { path: '/in/shop', headers: lines(signPaymos(badResource), ['x-webhook-id']), body: badResource });
      expect(res.status, res.body).toBe(200);
      const { rows } = await t.db.query<{ resource_id: string | null }>("SELECT resource_id FROM inbox_deliveries WHERE event_id = 'evt_bad_resource'");
      expect(rows[0]!.resource_id).toBeNull();
    });

    it('stores no resource id when it has a lone surrogate, rather than one that merges with another', async () => {
      expect((await send(envelope('"evt_surrogate_resource"', '"inv\\ud800"'))).status).toBe(200);
      const { rows } = await t.db.query<{ resource_id: string | null }>("SELECT resource_id FROM inbox_deliveries WHERE event_id = 'evt_surrogate_resource'");
      expect(rows[0]!.resource_id).toBeNull();
    });
  });
});
