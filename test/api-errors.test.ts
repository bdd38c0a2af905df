import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { errorCatalogue } from '../src/errors.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { SOURCE, insertInvoiceDelivery, testContext, workerTestConfig } from './helpers/inbox.js';

const TOKEN = 'api-errors-token';
const auth = { authorization: `Bearer ${TOKEN}` };

/** Every error answer is a catalogue code with the catalogue's status; nothing else reaches a client. */
function expectCatalogued(res: { statusCode: number; json(): unknown }, code: keyof typeof errorCatalogue): Record<string, unknown> {
  const body = res.json() as Record<string, unknown>;
  expect(body.error).toBe(code);
  expect(res.statusCode).toBe(errorCatalogue[code].status);
  expect(typeof body.message).toBe('string');
  return body;
}

describe('admin API: input the store cannot hold and bodies that are not there', () => {
  let t: TestDb;
  let app: FastifyInstance;
  const inject = (opts: InjectOptions) => app.inject({ ...opts, headers: { ...auth, ...opts.headers } });

  beforeAll(async () => {
    t = await createTestDb();
    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-api-errors-')) } });
    app = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken: TOKEN });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  describe('a JSON content type with no body (curl -X POST -H "content-type: application/json")', () => {
    it('replays an inbox delivery: the route takes no body', async () => {
      await insertInvoiceDelivery(t.db, { eventId: 'evt_empty_1', invoiceId: 'inv_e1', orderId: 'ord_e1', status: 'paid' });
      await t.db.query(`UPDATE inbox_deliveries SET status = 'dead' WHERE source = $1 AND event_id = 'evt_empty_1'`, [SOURCE]);
      const res = await inject({ method: 'POST', url: `/api/v1/inbox/${SOURCE}/evt_empty_1/replay`, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ source: SOURCE, event_id: 'evt_empty_1', status: 'pending' });
    });

    it("rotates an endpoint's secret: the route's body is optional", async () => {
      const created = await inject({ method: 'POST', url: '/api/v1/endpoints', payload: { url: 'https://example.com/hooks' } });
      expect(created.statusCode, created.body).toBe(201);
      const id = (created.json() as { id: string }).id;
      const res = await inject({ method: 'POST', url: `/api/v1/endpoints/${id}/rotate-secret`, headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as { secret: string }).secret).toMatch(/^whsec_/);
    });

    it("an empty body is no body whatever its type (curl -X POST -d '' sends a form type)", async () => {
      await insertInvoiceDelivery(t.db, { eventId: 'evt_empty_2', invoiceId: 'inv_e2', orderId: 'ord_e2', status: 'paid' });
      await t.db.query(`UPDATE inbox_deliveries SET status = 'dead' WHERE source = $1 AND event_id = 'evt_empty_2'`, [SOURCE]);
      for (const type of ['application/x-www-form-urlencoded', 'application/json; charset=utf-8']) {
        const res = await inject({ method: 'POST', url: `/api/v1/inbox/${SOURCE}/evt_empty_2/discard`, headers: { 'content-type': type }, payload: '' });
        expect(res.statusCode, `${type}: ${res.body}`).not.toBe(400);
        expect(res.statusCode, `${type}: ${res.body}`).not.toBe(415);
      }
    });

    it('a route that needs a body still refuses its absence, with a catalogue code', async () => {
      const res = await inject({ method: 'POST', url: '/api/v1/messages', headers: { 'content-type': 'application/json' } });
      expectCatalogued(res, 'VALIDATION_FAILED');
    });
  });

  describe('NUL bytes, which Postgres text cannot hold, are refused up front naming the field', () => {
    it('in an inbox query filter', async () => {
      const res = await inject({ method: 'GET', url: '/api/v1/inbox?resource_id=inv%00x' });
      expect(expectCatalogued(res, 'VALIDATION_FAILED').message).toContain('query.resource_id');
    });

    it('in an inbox path id', async () => {
      const res = await inject({ method: 'GET', url: `/api/v1/inbox/${SOURCE}/evt%00x` });
      expect(expectCatalogued(res, 'VALIDATION_FAILED').message).toContain('params.event_id');
    });

    it('in an outbox query filter and path id', async () => {
      const list = await inject({ method: 'GET', url: '/api/v1/deliveries?type=invoice%00paid' });
      expect(expectCatalogued(list, 'VALIDATION_FAILED').message).toContain('query.type');
      const show = await inject({ method: 'GET', url: '/api/v1/messages/evt_%00' });
      expect(expectCatalogued(show, 'VALIDATION_FAILED').message).toContain('params.id');
    });

    it('in a JSON body, at any depth', async () => {
      const res = await inject({ method: 'POST', url: '/api/v1/messages', payload: { type: 'invoice.paid', resource_id: 'inv\u00001', data: { note: 'ok' } } });
      expect(expectCatalogued(res, 'VALIDATION_FAILED').message).toContain('body.resource_id');
      const deep = await inject({ method: 'POST', url: '/api/v1/messages', payload: { type: 'invoice.paid', data: { lines: [{ sku: 'a\u0000' }] } } });
      expect(expectCatalogued(deep, 'VALIDATION_FAILED').message).toContain('body.data.lines.0.sku');
    });
  });

  describe('a value the store refuses is a 400, not a 500', () => {
    // The route's own checks should catch such values first; this is the net under them, so a value
    // a check missed answers 400 without repeating the database's text.
    it('an endpoint timeout too large for the column', async () => {
      const res = await inject({ method: 'POST', url: '/api/v1/endpoints', payload: { url: 'https://example.com/h', timeout: '100000000d' } });
      const body = expectCatalogued(res, 'VALIDATION_FAILED');
      expect(String(body.message)).not.toMatch(/out of range for type|integer/);
    });
  });

  describe("the framework's own refusals map to catalogue codes", () => {
    it('bad JSON', async () => {
      const res = await inject({ method: 'POST', url: '/api/v1/messages', headers: { 'content-type': 'application/json' }, payload: '{"type":' });
      expectCatalogued(res, 'BODY_NOT_JSON');
    });

    it('an unsupported media type', async () => {
      const res = await inject({
        method: 'POST',
        url: '/api/v1/messages',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'type=x',
      });
      expectCatalogued(res, 'UNSUPPORTED_MEDIA_TYPE');
      const text = await inject({ method: 'POST', url: '/api/v1/messages', headers: { 'content-type': 'text/plain' }, payload: '{"type":"x"}' });
      expect(expectCatalogued(text, 'UNSUPPORTED_MEDIA_TYPE').hint).toBe('send the body with Content-Type: application/json');
    });

    it('an unknown route', async () => {
      const res = await inject({ method: 'GET', url: '/api/v1/nothing-here' });
      expectCatalogued(res, 'NOT_FOUND');
    });

    it('a malformed percent-encoding in the path', async () => {
      const res = await inject({ method: 'GET', url: `/api/v1/inbox/${SOURCE}/evt%zz` });
      expect(res.statusCode).toBeLessThan(500);
      const body = res.json() as { error: string };
      expect(Object.keys(errorCatalogue)).toContain(body.error);
    });
  });
});
