import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { resolveSettings } from '../src/settings.js';
import type { Context } from '../src/service.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { waitUntil } from './helpers/wait.js';

const TOKEN = 'event-types-admin-token';
type Method = 'GET' | 'POST' | 'PATCH';

const invoicePaid = {
  name: 'invoice.paid',
  description: 'An invoice was paid in full.',
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    required: ['invoice_id', 'amount', 'currency'],
    properties: {
      invoice_id: { type: 'string' },
      amount: { type: 'integer', minimum: 0 },
      currency: { enum: ['TRY', 'EUR', 'USD'] },
      paid_at: { type: 'string', format: 'date-time' },
      lines: { type: 'array', items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' } } } },
    },
  },
  example: { invoice_id: 'inv_1', amount: 12500, currency: 'TRY', paid_at: '2026-03-01T10:00:00Z' },
};

describe('event types: a catalogue with schemas that publishing checks', () => {
  let t: TestDb;
  let app: FastifyInstance;
  /** A second process on the same store: types required, mismatches only warned, the catalogue read again at once. */
  let strict: FastifyInstance;
  const warnings: string[] = [];

  const context = (sending: Record<string, unknown>, logger = createLogger({ level: 'silent' })): Context => {
    const config = parseConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-event-types-')) }, sending });
    return { config, settings: resolveSettings(config, {}), db: t.db, logger, metrics: createMetricsRegistry(false) };
  };
  const call = async (on: FastifyInstance, method: Method, url: string, payload?: unknown, token = TOKEN) => {
    const res = await on.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the test reads into JSON answers of many shapes
    return { status: res.statusCode, body: res.json() as Record<string, any> };
  };
  const api = (method: Method, url: string, payload?: unknown, token?: string) => call(app, method, url, payload, token);
  const messageCount = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_messages')).rows[0]!.n;

  beforeAll(async () => {
    t = await createTestDb();
    app = await buildApp({ ctx: context({}), roles: new Set(['api']), adminToken: TOKEN });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        warnings.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ level: 'warn' }, sink);
    strict = await buildApp({
      ctx: context({ require_event_types: true, event_types: { on_mismatch: 'warn', refresh: '0ms' } }, logger),
      roles: new Set(['api']),
      adminToken: TOKEN,
    });
  });
  afterAll(async () => {
    await strict?.close();
    await app?.close();
    await t?.close();
  });

  it('declares a type, refuses a schema that does not compile, an example it refuses and a second type of the same name', async () => {
    const made = await api('POST', '/event-types', invoicePaid);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ ...invoicePaid, deprecated: false, tenant_ids: null, version: 1 });
    // Properties come back in the order they were written (the portal shows them as the provider wrote them).
    expect(Object.keys(made.body.schema.properties)).toEqual(['invoice_id', 'amount', 'currency', 'paid_at', 'lines']);

    const broken = await api('POST', '/event-types', { name: 'broken.schema', schema: { type: 'nope' } });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ error: 'VALIDATION_FAILED', message: expect.stringContaining('not a usable JSON Schema (2020-12)') });

    const badExample = await api('POST', '/event-types', {
      ...invoicePaid,
      name: 'invoice.voided',
      example: { invoice_id: 'inv_1', amount: -1, currency: 'TRY' },
    });
    expect(badExample.status).toBe(400);
    expect(badExample.body.message).toContain('example: does not match the schema at $.amount');

    expect((await api('POST', '/event-types', invoicePaid)).body.error).toBe('CONFLICT');
    expect((await api('GET', '/event-types/broken.schema')).status).toBe(404);
  });

  it('refuses a message whose data does not match, naming the failing path, and stores nothing', async () => {
    const before = await messageCount();
    const cases: Array<[unknown, string, string]> = [
      [{ invoice_id: 'inv_2', currency: 'TRY' }, '$.data.amount', 'required'],
      [{ invoice_id: 'inv_2', amount: '12', currency: 'TRY' }, '$.data.amount', 'type'],
      [{ invoice_id: 'inv_2', amount: 1, currency: 'GBP' }, '$.data.currency', 'enum'],
      [{ invoice_id: 'inv_2', amount: 1, currency: 'TRY', paid_at: 'yesterday' }, '$.data.paid_at', 'format'],
      [{ invoice_id: 'inv_2', amount: 1, currency: 'TRY', lines: [{ sku: 'a' }, { qty: 2 }] }, '$.data.lines[1].sku', 'required'],
      [null, '$.data', 'type'],
    ];
    for (const [data, path, keyword] of cases) {
      const res = await api('POST', '/messages', { type: 'invoice.paid', data });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body).toMatchObject({ error: 'EVENT_SCHEMA_MISMATCH', details: { type: 'invoice.paid', version: 1, path, keyword } });
      expect(res.body.message).toContain(path);
    }
    expect(await messageCount()).toBe(before);

    const ok = await api('POST', '/messages', { type: 'invoice.paid', data: invoicePaid.example });
    expect(ok.status).toBe(202);
    // Undeclared types stay allowed unless sending.require_event_types is on.
    expect((await api('POST', '/messages', { type: 'refund.issued', data: { anything: true } })).status).toBe(202);
    expect(await messageCount()).toBe(before + 2);
  });

  it('a changed schema moves the version on and is checked from the next message; other changes keep the version', async () => {
    const described = await api('PATCH', '/event-types/invoice.paid', { description: 'Paid in full (or in the last part).' });
    expect(described.body).toMatchObject({ version: 1, description: 'Paid in full (or in the last part).', schema: invoicePaid.schema });
    const loose = { type: 'object', required: ['invoice_id'] };
    const changed = await api('PATCH', '/event-types/invoice.paid', { schema: loose, example: { invoice_id: 'inv_9' } });
    expect(changed.body).toMatchObject({ version: 2, schema: loose });
    expect((await api('POST', '/messages', { type: 'invoice.paid', data: { invoice_id: 'inv_3' } })).status).toBe(202);
    const res = await api('POST', '/messages', { type: 'invoice.paid', data: { amount: 1 } });
    expect(res.body).toMatchObject({ error: 'EVENT_SCHEMA_MISMATCH', details: { version: 2, path: '$.data.invoice_id' } });
    // A PATCH cannot make the stored example disagree with the schema.
    expect((await api('PATCH', '/event-types/invoice.paid', { schema: { type: 'string' } })).body.error).toBe('VALIDATION_FAILED');
    expect((await api('PATCH', '/event-types/invoice.paid', { schema: invoicePaid.schema, example: invoicePaid.example })).body.version).toBe(3);
    expect((await api('PATCH', '/event-types/nothing.here', { deprecated: true })).status).toBe(404);
  });

  it('with require_event_types, refuses an undeclared type until another process declares it; with on_mismatch: warn, logs and publishes', async () => {
    const before = await messageCount();
    const refused = await call(strict, 'POST', '/messages', { type: 'order.created', data: {} });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ error: 'EVENT_TYPE_UNDECLARED', details: { type: 'order.created' } });
    expect(await messageCount()).toBe(before);

    // Declared through the other process: this one reads the catalogue again within `refresh`.
    expect((await api('POST', '/event-types', { name: 'order.created', schema: { type: 'object', required: ['order_id'] } })).status).toBe(201);
    await waitUntil(
      async () => (await call(strict, 'POST', '/messages', { type: 'order.created', data: { order_id: 'o1' } })).status === 202,
      10_000,
      'declared',
    );

    const warned = await call(strict, 'POST', '/messages', { type: 'order.created', data: { id: 'o2' } });
    expect(warned.status).toBe(202);
    await waitUntil(() => warnings.some((w) => w.includes('$.data.order_id')), 5_000, 'the mismatch logged');
    const line = JSON.parse(warnings.find((w) => w.includes('$.data.order_id'))!) as { mismatch: Record<string, unknown> };
    expect(line.mismatch).toMatchObject({ type: 'order.created', path: '$.data.order_id', keyword: 'required' });
    expect(await messageCount()).toBe(before + 2);
  });

  it("shows a type to the tenants it names only; a tenant's caller cannot change the catalogue", async () => {
    for (const id of ['m_cat_a', 'm_cat_b']) expect((await api('POST', '/tenants', { id })).status).toBe(201);
    expect((await api('POST', '/event-types', { name: 'payout.sent', description: 'for A', tenant_ids: ['m_cat_a'] })).status).toBe(201);
    const tokenOf = async (tenant: string) => (await api('POST', `/tenants/${tenant}/tokens`, { role: 'operator', name: 'backend' })).body.token as string;
    const [a, b] = [await tokenOf('m_cat_a'), await tokenOf('m_cat_b')];

    const names = async (token: string, query = '') =>
      ((await api('GET', `/event-types${query}`, undefined, token)).body.items as Array<{ name: string }>).map((x) => x.name);
    expect(await names(a)).toContain('payout.sent');
    expect(await names(b)).not.toContain('payout.sent');
    expect(await names(b)).toContain('invoice.paid');
    expect(await names(TOKEN)).toContain('payout.sent');
    expect(await names(TOKEN, '?tenant_id=m_cat_b')).not.toContain('payout.sent');
    expect((await api('GET', '/event-types/payout.sent', undefined, b)).status).toBe(404);
    expect((await api('GET', '/event-types/payout.sent', undefined, a)).body.description).toBe('for A');
    expect((await api('GET', '/event-types?tenant_id=m_cat_a', undefined, b)).status).toBe(404);
    expect((await api('POST', '/event-types', { name: 'x.y' }, a)).status).toBe(404);
    expect((await api('PATCH', '/event-types/payout.sent', { deprecated: true }, a)).status).toBe(404);
  });

  it('exports the catalogue as AsyncAPI 3.0, whose payload schemas accept the bytes tekil stores for a message', async () => {
    const res = await api('GET', '/event-types/asyncapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.asyncapi).toBe('3.0.0');
    expect(doc.channels['invoice.paid']).toMatchObject({ address: 'invoice.paid' });
    expect(doc.operations['send_invoice.paid']).toMatchObject({ action: 'send', channel: { $ref: '#/channels/invoice.paid' } });
    const message = doc.components.messages['invoice.paid'];
    expect(message.payload.schemaFormat).toBe('application/schema+json;version=2020-12');

    const published = await api('POST', '/messages', { type: 'invoice.paid', resource_id: 'inv_1', data: invoicePaid.example });
    const { rows } = await t.db.query<{ payload: Uint8Array }>('SELECT payload FROM outbox_messages WHERE id = $1', [published.body.id]);
    const sent = JSON.parse(Buffer.from(rows[0]!.payload).toString('utf8')) as unknown;
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(message.payload.schema as object);
    expect(validate(sent), JSON.stringify(validate.errors)).toBe(true);
    expect(validate(message.examples[0].payload), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...(sent as object), data: { amount: 1 } })).toBe(false);
  });
});
