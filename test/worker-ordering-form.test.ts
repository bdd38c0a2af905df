import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseConfig } from '../src/config/index.js';
import { isTekilError } from '../src/errors.js';
import { joinIdParts } from '../src/receiver/extract.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { deliveryRow, drain } from './helpers/inbox.js';
import { receiverApp, testContext } from './helpers/receiver.js';

/**
 * The ordering guard reads a form body's state (`form:status`) the way extraction reads its ids:
 * PayTR notifications posted to the real HTTP receiver, processed by the worker on the store under
 * test. Hashes are computed here from PayTR's documented formula with node:crypto.
 */
const MERCHANT_KEY = 'KEYdemo123';
const MERCHANT_SALT = 'SALTdemo456';
const FORM = 'application/x-www-form-urlencoded';

function paytrBody(post: { merchant_oid: string; status: string; total_amount: string }): string {
  const hash = createHmac('sha256', MERCHANT_KEY)
    .update(post.merchant_oid + MERCHANT_SALT + post.status + post.total_amount)
    .digest('base64');
  return new URLSearchParams({ ...post, hash, payment_type: 'card', currency: 'TL', test_mode: '1' }).toString();
}

describe('ordering guard: a form-field state (PayTR, form:status)', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  const config = parseConfig({
    worker: { batch_size: 50, concurrency: 1, lease: '5s', poll_interval: '20ms' },
    sources: {
      paytr: {
        scheme: 'paytr',
        paytr: { merchant_key: MERCHANT_KEY, merchant_salt: MERCHANT_SALT },
        retry: { max_attempts: 3, base: '5ms', cap: '20ms' },
        ordering: { state: 'form:status', states: ['failed'], terminal: ['success'] },
      },
    },
  });
  const handled: string[] = [];
  const handlers = defineHandlers().on('paytr', '*', async (event) => {
    handled.push(event.eventId);
    return { resultRef: event.resourceId ?? undefined };
  });

  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db, config));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  const post = async (body: string) => {
    const res = await fetch(`${url}/in/paytr`, { method: 'POST', body, headers: { 'content-type': FORM } });
    return { status: res.status, text: await res.text() };
  };
  const resource = async (oid: string) =>
    (
      await t.db.query<{ state: string | null; event_id: string }>('SELECT state, event_id FROM resources WHERE source = $1 AND resource_id = $2', [
        'paytr',
        oid,
      ])
    ).rows[0];

  it('a failed notification after success for the same merchant_oid is stale; its handler does not run', async () => {
    const worker = createInboxWorker(testContext(t.db, config), { handlers });
    const success = joinIdParts(['SIP7001', 'success']);
    const failed = joinIdParts(['SIP7001', 'failed']);
    expect(await post(paytrBody({ merchant_oid: 'SIP7001', status: 'success', total_amount: '3456' }))).toEqual({ status: 200, text: 'OK' });
    await drain(worker, t.db);
    expect(await resource('SIP7001')).toEqual({ state: 'success', event_id: success });

    expect(await post(paytrBody({ merchant_oid: 'SIP7001', status: 'failed', total_amount: '0' }))).toEqual({ status: 200, text: 'OK' });
    await drain(worker, t.db);

    expect(handled).toEqual([success]);
    expect(await deliveryRow(t.db, success, 'paytr')).toMatchObject({ status: 'done' });
    const late = await deliveryRow(t.db, failed, 'paytr');
    expect(late).toMatchObject({ status: 'stale', attempts: 1 });
    expect(late?.last_error).toMatch(/terminal state success/);
    expect(await resource('SIP7001')).toEqual({ state: 'success', event_id: success });
  });

  it('a success after failed for the same merchant_oid is applied (failed ranks below success)', async () => {
    const worker = createInboxWorker(testContext(t.db, config), { handlers });
    handled.length = 0;
    const failed = joinIdParts(['SIP7002', 'failed']);
    const success = joinIdParts(['SIP7002', 'success']);
    await post(paytrBody({ merchant_oid: 'SIP7002', status: 'failed', total_amount: '0' }));
    await drain(worker, t.db);
    await post(paytrBody({ merchant_oid: 'SIP7002', status: 'success', total_amount: '3456' }));
    await drain(worker, t.db);
    expect(handled).toEqual([failed, success]);
    expect(await resource('SIP7002')).toEqual({ state: 'success', event_id: success });
  });
});

describe('ordering guard: a header state (header:X-Order-State), kept with the delivery for the guard', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  const SECRET = 'hdr-secret';
  const config = parseConfig({
    worker: { batch_size: 50, concurrency: 1, lease: '5s', poll_interval: '20ms' },
    sources: {
      orders: {
        scheme: 'hmac',
        secrets: [SECRET],
        hmac: { signature_header: 'X-Sig' },
        event_id: 'body:id',
        resource_id: 'body:order',
        retry: { max_attempts: 3, base: '5ms', cap: '20ms' },
        ordering: { state: 'header:X-Order-State', states: ['open'], terminal: ['closed'] },
      },
    },
  });
  const handled: string[] = [];
  const handlers = defineHandlers().on('orders', '*', async (event) => {
    handled.push(event.eventId);
  });

  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db, config));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  const post = async (id: string, state: string) => {
    const body = JSON.stringify({ id, order: 'ord_h1' });
    const sig = createHmac('sha256', SECRET).update(body).digest('hex');
    const res = await fetch(`${url}/in/orders`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-sig': sig, 'x-order-state': state },
    });
    expect(res.status).toBe(200);
  };

  it('an open after closed is stale: the header was stored and the guard read it', async () => {
    const worker = createInboxWorker(testContext(t.db, config), { handlers });
    await post('h_closed', 'closed');
    await drain(worker, t.db);
    await post('h_open', 'open');
    await drain(worker, t.db);
    expect(handled).toEqual(['h_closed']);
    expect(await deliveryRow(t.db, 'h_open', 'orders')).toMatchObject({ status: 'stale' });
    const kept = await t.db.query<{ headers: Record<string, string> }>('SELECT headers FROM inbox_deliveries WHERE event_id = $1', ['h_open']);
    expect(kept.rows[0]!.headers['x-order-state']).toBe('open');
    expect(kept.rows[0]!.headers['x-sig']).toBeUndefined();
  });
});

/** The configuration error parseConfig throws, as its message (fails when it does not throw CONFIG_INVALID). */
function refusal(input: unknown): string {
  try {
    parseConfig(input, {});
  } catch (err) {
    if (isTekilError(err, 'CONFIG_INVALID')) return err.message;
    throw err;
  }
  throw new Error('the configuration loaded');
}

describe('a locator that cannot apply to the scheme is refused at load', () => {
  const paytr = { scheme: 'paytr', paytr: { merchant_key: 'k', merchant_salt: 's' } };
  const paymos = { scheme: 'paymos', secrets: ['whsec_dGVzdA=='] };

  it('a PayTR source (a form body) refuses body: locators, in ordering.state and in the ids', () => {
    const state = refusal({ sources: { paytr: { ...paytr, ordering: { state: 'body:status', terminal: ['success'] } } } });
    expect(state).toContain('sources.paytr.ordering.state');
    expect(state).toMatch(/form:status/);
    const id = refusal({ sources: { paytr: { ...paytr, resource_id: ['form:merchant_oid', 'body:oid'] } } });
    expect(id).toContain('sources.paytr.resource_id');
    const composite = refusal({ sources: { paytr: { ...paytr, event_id: { all: ['form:merchant_oid', 'body:status'] } } } });
    expect(composite).toContain('sources.paytr.event_id');
  });

  it('a JSON scheme refuses form: locators', () => {
    const state = refusal({ sources: { shop: { ...paymos, ordering: { state: 'form:status' } } } });
    expect(state).toContain('sources.shop.ordering.state');
    expect(state).toMatch(/JSON/);
    expect(refusal({ sources: { shop: { ...paymos, event_type: 'form:type' } } })).toContain('sources.shop.event_type');
  });

  it('a generic hmac source whose signature is a form field refuses body: locators; one signed in a header takes both', () => {
    const formHmac = { scheme: 'hmac', secrets: ['k'], hmac: { signature: 'form:sig', signed_payload: '{form:order}' } };
    expect(refusal({ sources: { f: { ...formHmac, ordering: { state: 'body:state' } } } })).toContain('sources.f.ordering.state');
    const headerHmac = { scheme: 'hmac', secrets: ['k'], hmac: { signature_header: 'X-Sig' } };
    expect(() =>
      parseConfig({ sources: { a: { ...headerHmac, ordering: { state: 'form:state' } }, b: { ...headerHmac, ordering: { state: 'body:state' } } } }, {}),
    ).not.toThrow();
  });

  it('a credential header as the ordering state is refused: it is never stored for the guard to read', () => {
    const message = refusal({ sources: { shop: { ...paymos, ordering: { state: 'header:X-Signature-State' } } } });
    expect(message).toContain('sources.shop.ordering.state');
    expect(message).toMatch(/credential/);
  });

  it('the configurations in use still load: PayTR with form:status, JSON schemes with body: and header: states', () => {
    expect(() =>
      parseConfig(
        {
          sources: {
            paytr: { ...paytr, ordering: { state: 'form:status', states: ['failed'], terminal: ['success'] } },
            shop: { ...paymos, ordering: { state: 'body:data.status' } },
            hooks: { ...paymos, ordering: { state: 'header:X-State' } },
          },
        },
        {},
      ),
    ).not.toThrow();
  });
});
