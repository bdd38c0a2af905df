import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { PAYMOS_SECRET, countRows, paymosBody, receiverApp, receiverConfig, signPaymos, signStandard, testContext } from './helpers/receiver.js';
import { buildApp } from '../src/app.js';
import { pino } from 'pino';
import { redactPaths } from '../src/logger.js';

describe('POST /in/:source', () => {
  let t: TestDb;
  let app: FastifyInstance;
  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db));
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });
  beforeEach(async () => {
    await t.db.query('DELETE FROM inbox_deliveries');
  });

  const post = (source: string, body: string | Buffer, headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: `/in/${source}`, payload: body, headers });

  it('accepts a new delivery, answers duplicate for the same one, and stores it byte for byte', async () => {
    const body = `${paymosBody('evt_1').slice(0, -1)} ,"note":"ünïcödé  spaced"}`;
    const headers = { ...signPaymos(body), 'user-agent': 'Paymos-Webhooks/1.0', authorization: 'Bearer nope' };
    const first = await post('shop', body, headers);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ status: 'accepted' });
    const again = await post('shop', body, headers);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ status: 'duplicate' });

    const { rows } = await t.db.query<Record<string, unknown>>('SELECT * FROM inbox_deliveries');
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(Buffer.from(row.body as Uint8Array).equals(Buffer.from(body))).toBe(true);
    expect(row).toMatchObject({
      source: 'shop',
      event_id: 'evt_1',
      resource_id: 'inv_evt_1',
      event_type: 'invoice.paid',
      status: 'pending',
      content_type: 'application/json',
    });
    expect((row.occurred_at as Date).toISOString()).toBe('2026-11-29T10:00:00.000Z');
    expect(row.received_at).toBeInstanceOf(Date);
    const stored = row.headers as Record<string, string>;
    expect(stored['user-agent']).toBe('Paymos-Webhooks/1.0');
    expect(stored['content-type']).toBe('application/json');
    // Never signatures or credentials.
    expect(Object.keys(stored).some((k) => /signature|authorization/.test(k))).toBe(false);
  });

  it('reads the event id from a verified header (Standard Webhooks) and keeps any content type raw', async () => {
    const body = 'a=1&b=%20two\r\n';
    const headers = { ...signStandard(body, 'msg_form_1'), 'content-type': 'application/x-www-form-urlencoded' };
    const res = await post('demo', body, headers);
    expect(res.json()).toEqual({ status: 'accepted' });
    const { rows } = await t.db.query<{ body: Uint8Array; event_id: string; headers: Record<string, string> }>(
      'SELECT body, event_id, headers FROM inbox_deliveries',
    );
    expect(rows[0]!.event_id).toBe('msg_form_1');
    expect(Buffer.from(rows[0]!.body).toString()).toBe(body);
    expect(rows[0]!.headers['webhook-id']).toBe('msg_form_1');
    expect(rows[0]!.headers['webhook-signature']).toBeUndefined();

    const binary = Buffer.from([0, 255, 1, 254, 10]);
    const noType = signStandard(binary, 'msg_bin_1');
    delete (noType as Record<string, string | undefined>)['content-type'];
    const res2 = await post('demo', binary, { ...noType, 'content-type': 'application/octet-stream' });
    expect(res2.json()).toEqual({ status: 'accepted' });
    const bin = await t.db.query<{ body: Uint8Array }>("SELECT body FROM inbox_deliveries WHERE event_id = 'msg_bin_1'");
    expect(Buffer.from(bin.rows[0]!.body).equals(binary)).toBe(true);
  });

  it('50 concurrent copies of one event: all 2xx, exactly one accepted, exactly one row', async () => {
    const body = paymosBody('evt_race');
    const headers = signPaymos(body);
    const answers = await Promise.all(Array.from({ length: 50 }, () => post('shop', body, headers)));
    expect(answers.every((r) => r.statusCode === 200)).toBe(true);
    expect(answers.filter((r) => r.json().status === 'accepted')).toHaveLength(1);
    expect(await countRows(t.db)).toBe(1);
  });

  it('1,000 events, 30% of them repeats, sent concurrently: rows = distinct ids', async () => {
    const distinct = 700;
    const ids = Array.from({ length: 1000 }, (_, i) => `evt_bulk_${i < distinct ? i : (i * 7919) % distinct}`);
    const answers = await Promise.all(
      ids.map((id) => {
        const body = paymosBody(id);
        return post('shop', body, signPaymos(body));
      }),
    );
    expect(answers.every((r) => r.statusCode === 200)).toBe(true);
    expect(answers.filter((r) => r.json().status === 'accepted')).toHaveLength(distinct);
    expect(await countRows(t.db)).toBe(distinct);
  });

  it('the same event id on two sources is two deliveries', async () => {
    const body = paymosBody('evt_shared');
    expect((await post('shop', body, signPaymos(body))).json()).toEqual({ status: 'accepted' });
    expect((await post('demo', body, signStandard(body, 'evt_shared'))).json()).toEqual({ status: 'accepted' });
    const { rows } = await t.db.query<{ source: string }>("SELECT source FROM inbox_deliveries WHERE event_id = 'evt_shared' ORDER BY source");
    expect(rows.map((r) => r.source)).toEqual(['demo', 'shop']);
  });

  describe('rejections store nothing', () => {
    const body = paymosBody('evt_rejected');
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, () => { source: string; body: string | Buffer; headers: Record<string, string> }, number, string]> = [
      ['unknown source', () => ({ source: 'nope', body, headers: signPaymos(body) }), 404, 'SOURCE_NOT_FOUND'],
      [
        'body over the limit',
        () => {
          const big = paymosBody('evt_rejected', { pad: 'x'.repeat(70 * 1024) });
          return { source: 'shop', body: big, headers: signPaymos(big) };
        },
        413,
        'BODY_TOO_LARGE',
      ],
      ['no signature', () => ({ source: 'shop', body, headers: { 'content-type': 'application/json' } }), 401, 'SIGNATURE_MISSING'],
      ['wrong secret', () => ({ source: 'shop', body, headers: signPaymos(body, { secret: 'whsec_other' }) }), 401, 'SIGNATURE_INVALID'],
      ['tampered body', () => ({ source: 'shop', body: body.replace('12.50', '99.50'), headers: signPaymos(body) }), 401, 'SIGNATURE_INVALID'],
      [
        'garbled signature header',
        () => ({ source: 'shop', body, headers: { ...signPaymos(body), 'x-webhook-signature': 'garbage' } }),
        401,
        'SIGNATURE_MALFORMED',
      ],
      ['stale timestamp', () => ({ source: 'shop', body, headers: signPaymos(body, { timestamp: now - 3600 }) }), 401, 'TIMESTAMP_OUT_OF_TOLERANCE'],
      ['future timestamp', () => ({ source: 'shop', body, headers: signPaymos(body, { timestamp: now + 3600 }) }), 401, 'TIMESTAMP_OUT_OF_TOLERANCE'],
      [
        'standard webhook timestamp out of tolerance',
        () => ({ source: 'demo', body, headers: signStandard(body, 'msg_old', { timestamp: now - 3600 }) }),
        401,
        'TIMESTAMP_OUT_OF_TOLERANCE',
      ],
      [
        'no event id',
        () => {
          const noId = JSON.stringify({ event_type: 'invoice.paid', data: {} });
          const headers = signPaymos(noId);
          delete (headers as Record<string, string | undefined>)['x-webhook-id'];
          return { source: 'shop', body: noId, headers };
        },
        400,
        'EVENT_ID_MISSING',
      ],
      [
        'event id of the wrong kind',
        () => {
          const objId = JSON.stringify({ event_id: { nested: true }, data: {} });
          return { source: 'shop', body: objId, headers: signPaymos(objId) };
        },
        400,
        'EVENT_ID_INVALID',
      ],
      [
        'event id too long',
        () => {
          const longId = paymosBody('e'.repeat(300));
          return { source: 'shop', body: longId, headers: signPaymos(longId) };
        },
        400,
        'EVENT_ID_INVALID',
      ],
      [
        'body not JSON when the id is in the body',
        () => {
          const headers = signPaymos('not json');
          delete (headers as Record<string, string | undefined>)['x-webhook-id'];
          return { source: 'shop', body: 'not json', headers };
        },
        400,
        'BODY_NOT_JSON',
      ],
    ];
    it.each(cases)('%s → %i %s', async (_name, make, status, code) => {
      const c = make();
      const res = await post(c.source, c.body, c.headers);
      expect(res.statusCode).toBe(status);
      expect(res.json()).toMatchObject({ error: code });
      expect(typeof res.json().message).toBe('string');
      expect(await countRows(t.db)).toBe(0);
    });
  });

  it('counts outcomes in /metrics', async () => {
    const body = paymosBody('evt_metrics');
    await post('shop', body, signPaymos(body));
    await post('shop', body, signPaymos(body));
    await post('shop', body, { 'content-type': 'application/json' });
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/tekil_inbox_deliveries_total\{source="shop",outcome="accepted",reason=""\} \d+/);
    expect(text).toMatch(/tekil_inbox_deliveries_total\{source="shop",outcome="duplicate",reason=""\} \d+/);
    expect(text).toMatch(/tekil_inbox_deliveries_total\{source="shop",outcome="rejected",reason="SIGNATURE_MISSING"\} \d+/);
    expect(text).toMatch(/tekil_inbox_ack_seconds_count\{source="shop"\} \d+/);
    expect(text).toMatch(/tekil_inbox_batch_rows_count \d+/);
  });

  it('logs never contain bodies, signatures, authorization headers or secrets, even at debug level', async () => {
    const lines: string[] = [];
    const config = receiverConfig();
    const ctx = testContext(t.db, config);
    // tekil's logger settings, writing into memory.
    ctx.logger = pino({ level: 'debug', redact: { paths: redactPaths, censor: '[redacted]' } }, { write: (line: string) => void lines.push(line) });
    const app = await buildApp({ ctx, roles: new Set(['receiver']) });
    try {
      const body = paymosBody('evt_log_1', { secret_note: 'BODY-MARKER-7781' });
      const headers: Record<string, string> = { ...signPaymos(body), authorization: 'Bearer AUTH-MARKER-5521' };
      expect((await app.inject({ method: 'POST', url: '/in/shop', payload: body, headers })).statusCode).toBe(200);
      const wrong = signPaymos(body, { secret: 'whsec_WRONG-SECRET-MARKER' });
      expect((await app.inject({ method: 'POST', url: '/in/shop', payload: body, headers: wrong })).statusCode).toBe(401);
      // No content type at all: still read raw, still verified.
      const body2 = paymosBody('evt_log_2');
      const bare = await app.inject({
        method: 'POST',
        url: '/in/shop',
        payload: Buffer.from(body2),
        headers: { 'x-webhook-signature': signPaymos(body2)['X-Webhook-Signature']! },
      });
      expect(bare.json()).toEqual({ status: 'accepted' });
      const stored = await t.db.query<{ content_type: string | null; body: Uint8Array }>(
        "SELECT content_type, body FROM inbox_deliveries WHERE event_id = 'evt_log_2'",
      );
      expect(stored.rows[0]!.content_type).toBeNull();
      expect(Buffer.from(stored.rows[0]!.body).toString()).toBe(body2);
    } finally {
      await app.close();
    }
    const text = lines.join('');
    expect(text).toContain('webhook rejected'); // the 401 was logged…
    for (const marker of ['BODY-MARKER-7781', 'AUTH-MARKER-5521', 'WRONG-SECRET-MARKER', PAYMOS_SECRET, 'v1=']) {
      expect(text).not.toContain(marker); // …without anything secret or any body
    }
  });
});
