import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { resolveSettings } from '../src/settings.js';
import type { Context } from '../src/service.js';
import { createTestDb, type TestDb } from './helpers/db.js';

const TOKEN = 'publish-input-token';

/** POST /api/v1/messages: bodies nested too deep, and Idempotency-Key repeats with another request. */
describe('admin API: publishing input', () => {
  let t: TestDb;
  let app: FastifyInstance;

  const post = async (url: string, payload: string | object, key?: string) => {
    const res = await app.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
    return { status: res.statusCode, body: res.json() as Record<string, unknown>, replayed: res.headers['idempotent-replayed'] };
  };

  beforeAll(async () => {
    t = await createTestDb();
    const config = parseConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-publish-input-')) }, sending: { allow_networks: ['127.0.0.0/8'] } });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: TOKEN });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  const nested = (depth: number, open = '{"a":', close = '}') => `${open.repeat(depth)}1${close.repeat(depth)}`;

  it('a 20,000-deep data is 400 BODY_TOO_DEEP, not 500; 63 levels inside the body are accepted', async () => {
    for (const data of [nested(20_000), nested(20_000, '[', ']'), nested(64)]) {
      const res = await post('/messages', `{"type":"deep.test","data":${data}}`);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toBe('BODY_TOO_DEEP');
    }
    // Brackets inside strings are text, not nesting.
    const res = await post('/messages', { type: 'deep.test', data: { text: '{'.repeat(1000), inner: JSON.parse(nested(62)) as unknown } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect((await post('/endpoints', nested(20_000, '[', ']'))).body.error).toBe('BODY_TOO_DEEP');
  });

  it('a repeated Idempotency-Key with the same request answers the first message; with another, 422', async () => {
    const first = await post('/messages', { type: 'order.paid', resource_id: 'ord_1', data: { total: 5, lines: [{ sku: 'a' }] } }, 'key-1');
    expect(first.status).toBe(202);
    // The same request, keys in another order: the first message, marked as a repeat.
    const same = await post('/messages', { data: { lines: [{ sku: 'a' }], total: 5 }, resource_id: 'ord_1', type: 'order.paid' }, 'key-1');
    expect(same).toMatchObject({ status: 202, body: { id: first.body.id }, replayed: 'true' });

    for (const other of [
      { type: 'order.paid', resource_id: 'ord_1', data: { total: 6, lines: [{ sku: 'a' }] } },
      { type: 'order.refunded', resource_id: 'ord_1', data: { total: 5, lines: [{ sku: 'a' }] } },
      { type: 'order.paid', resource_id: 'ord_2', data: { total: 5, lines: [{ sku: 'a' }] } },
      { type: 'order.paid', data: { total: 5, lines: [{ sku: 'a' }] } },
    ]) {
      const res = await post('/messages', other, 'key-1');
      expect(res.status, JSON.stringify(other)).toBe(422);
      expect(res.body.error).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(res.body.message).toContain(String(first.body.id));
    }
    const stored = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_messages WHERE idempotency_key = 'key-1'");
    expect(stored.rows[0]!.n).toBe(1);
  });

  it('copies of one key in one publishing batch: the same request is a repeat, another is 422', async () => {
    const body = { type: 'batch.twin', data: { n: 1 } };
    const answers = await Promise.all([
      post('/messages', body, 'twin'),
      post('/messages', body, 'twin'),
      post('/messages', { ...body, data: { n: 2 } }, 'twin'),
    ]);
    const ok = answers.filter((a) => a.status === 202);
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(1);
    const refused = answers.filter((a) => a.status === 422);
    // Whichever of the two bodies went first, the copies of the other are refused.
    expect(ok.length + refused.length).toBe(3);
    expect(refused.length === 1 || refused.length === 2).toBe(true);
    for (const r of refused) expect(r.body.error).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});
