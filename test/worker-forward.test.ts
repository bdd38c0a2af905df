import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { deliveryRow, testContext, workerTestConfig } from './helpers/inbox.js';
import { createInboxWorker, type InboxWorker } from '../src/worker/worker.js';
import { decodeHeaderValue } from '../src/http/header-value.js';

const SOURCE = 'fwd';
const PUBLIC_ONLY = 'fwd-public-only';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Forwarding to an application URL, against a real HTTP server that answers as each test scripts. */
describe('worker: forwarding', () => {
  let t: TestDb;
  let server: Server;
  let worker: InboxWorker;
  let seen: Seen[];
  let answer: (req: IncomingMessage, res: ServerResponse) => void;

  beforeAll(async () => {
    t = await createTestDb();
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        answer(req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const config = workerTestConfig({}, {});
    config.sources[SOURCE] = {
      ...config.sources['shop-paymos']!,
      ordering: undefined,
      // Long backoffs: a test decides when a retry is due (by moving next_attempt_at; full jitter can
      // still draw a short one, so a test that runs several batches holds its retries back itself).
      retry: { max_attempts: 5, base: 60_000, cap: 60_000 },
      forward: { url: `http://127.0.0.1:${port}/hooks`, timeout: 300, secret: SECRET, max_in_flight: 64 },
    };
    // The same application, for a source whose forward policy allows no private network at all.
    config.sources[PUBLIC_ONLY] = {
      ...config.sources[SOURCE]!,
      forward: { url: `http://127.0.0.1:${port}/hooks`, timeout: 300, secret: SECRET, max_in_flight: 64, allow_networks: [] },
    };
    worker = createInboxWorker(testContext(t.db, config));
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await t?.close();
  });
  beforeEach(() => {
    seen = [];
  });

  const insert = async (eventId: string, body: Buffer | string = `{"event_id":"${eventId}","n":"ü"}`, contentType = 'application/json') => {
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, content_type) VALUES ($1, $2, $5, 'invoice.paid', $3, $4)`,
      [SOURCE, eventId, Buffer.from(body), contentType, `inv_${eventId}`],
    );
  };

  it('POSTs the raw bytes with the ids, Idempotency-Key and a Standard Webhooks signature; 2xx → done', async () => {
    answer = (_req, res) => res.writeHead(204, { 'x-tekil-result-ref': 'order_77' }).end();
    const body = Buffer.from('{"event_id":"evt_f1",  "odd spacing":[1, 2]}');
    await insert('evt_f1', body, 'application/json; charset=utf-8');
    expect(await worker.runOnce()).toBe(1);
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    expect(req.url).toBe('/hooks');
    expect(req.body.equals(body)).toBe(true);
    expect(req.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'idempotency-key': `${SOURCE}:evt_f1`,
      'x-tekil-source': SOURCE,
      'x-tekil-event-id': 'evt_f1',
      'x-tekil-resource-id': 'inv_evt_f1',
      'webhook-id': `${SOURCE}:evt_f1`,
    });
    // The application verifies with any Standard Webhooks library.
    expect(() => new Webhook(SECRET).verify(req.body, req.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook('whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA==').verify(req.body, req.headers as Record<string, string>)).toThrow();
    expect(await deliveryRow(t.db, 'evt_f1', SOURCE)).toMatchObject({ status: 'done', result_ref: 'order_77' });
  });

  it('5xx, a redirect and a timeout are retried; the redirect is never followed', async () => {
    const answers = [
      (res: ServerResponse) => res.writeHead(503).end('down'),
      (res: ServerResponse) => res.writeHead(302, { location: '/elsewhere' }).end(),
      (_res: ServerResponse) => {}, // never answers: the 300 ms timeout fires
    ];
    for (const [i, reply] of answers.entries()) {
      answer = (_req, res) => reply(res);
      await insert(`evt_f2_${i}`);
      expect(await worker.runOnce()).toBe(1);
      // Full jitter draws the backoff anywhere in [0, 60 s]: hold the retry back, so the next run
      // claims only the next delivery.
      await t.db.query("UPDATE inbox_queue SET next_attempt_at = now() + interval '1 hour' WHERE event_id = $1", [`evt_f2_${i}`]);
    }
    const rows = await Promise.all([0, 1, 2].map((i) => deliveryRow(t.db, `evt_f2_${i}`, SOURCE)));
    expect(rows.map((r) => r?.status)).toEqual(['pending', 'pending', 'pending']);
    expect(rows[0]?.last_error).toBe('forward: HTTP 503');
    expect(rows[1]?.last_error).toMatch(/HTTP 302 \(redirects are not followed\)/);
    expect(rows[2]?.last_error).toBe('forward: no answer within 300 ms');
    expect(seen.map((s) => s.url)).toEqual(['/hooks', '/hooks', '/hooks']);

    answer = (_req, res) => res.writeHead(200).end();
    await t.db.query("UPDATE inbox_queue SET next_attempt_at = now() WHERE event_id LIKE 'evt_f2_%'");
    expect(await worker.runOnce()).toBe(3);
    const after = await Promise.all([0, 1, 2].map((i) => deliveryRow(t.db, `evt_f2_${i}`, SOURCE)));
    expect(after.map((r) => [r?.status, r?.attempts])).toEqual([
      ['done', 2],
      ['done', 2],
      ['done', 2],
    ]);
    expect(seen.every((s) => s.url === '/hooks')).toBe(true);
  });

  it('429 honours Retry-After up to worker.retry_after_max; other 4xx are permanent (dead at once)', async () => {
    answer = (_req, res) => res.writeHead(429, { 'retry-after': '30' }).end();
    await insert('evt_f3');
    await worker.runOnce();
    const limited = await t.db.query<{ status: string; wait_s: number }>(
      "SELECT d.status, extract(epoch FROM q.next_attempt_at - now())::float AS wait_s FROM inbox_deliveries d JOIN inbox_queue q USING (source, event_id) WHERE event_id = 'evt_f3'",
    );
    expect(limited.rows[0]!.status).toBe('pending');
    expect(limited.rows[0]!.wait_s).toBeGreaterThan(25);

    // A Retry-After of a day is cut to worker.retry_after_max (default 1 h), as sending cuts its own.
    answer = (_req, res) => res.writeHead(429, { 'retry-after': '86400' }).end();
    await insert('evt_f3_day');
    await worker.runOnce();
    const capped = await t.db.query<{ status: string; wait_s: number }>(
      "SELECT d.status, extract(epoch FROM q.next_attempt_at - now())::float AS wait_s FROM inbox_deliveries d JOIN inbox_queue q USING (source, event_id) WHERE event_id = 'evt_f3_day'",
    );
    expect(capped.rows[0]!.status).toBe('pending');
    expect(capped.rows[0]!.wait_s).toBeGreaterThan(3_500);
    expect(capped.rows[0]!.wait_s).toBeLessThan(3_601);

    answer = (_req, res) => res.writeHead(422).end('{"error":"unknown order"}');
    await insert('evt_f4');
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'evt_f4', SOURCE)).toMatchObject({ status: 'dead', attempts: 1, last_error: 'forward: HTTP 422' });
  });

  it('non-ASCII and CR/LF ids and types are sent encoded (RFC 8187 form), signed as sent, and done', async () => {
    answer = (_req, res) => res.writeHead(200).end();
    const eventId = 'evt_ş_\r\n_1';
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, content_type) VALUES ($1, $2, $3, $4, $5, 'application/json')`,
      [SOURCE, eventId, 'müşteri-42', 'sipariş.ödendi', Buffer.from('{"ü":1}')],
    );
    expect(await worker.runOnce()).toBe(1);
    expect(seen).toHaveLength(1);
    const h = seen[0]!.headers;
    expect(h['x-tekil-event-type']).toBe("UTF-8''sipari%C5%9F.%C3%B6dendi");
    expect(decodeHeaderValue(h['x-tekil-resource-id'] as string)).toBe('müşteri-42');
    expect(decodeHeaderValue(h['x-tekil-event-id'] as string)).toBe(eventId);
    expect(decodeHeaderValue(h['idempotency-key'] as string)).toBe(`${SOURCE}:${eventId}`);
    expect(h['webhook-id']).toBe(h['idempotency-key']);
    expect(() => new Webhook(SECRET).verify(seen[0]!.body, h as Record<string, string>)).not.toThrow();
    expect(await deliveryRow(t.db, eventId, SOURCE)).toMatchObject({ status: 'done', attempts: 1 });
  });

  it('a request tekil cannot build is permanent: dead after one attempt, nothing sent', async () => {
    answer = (_req, res) => res.writeHead(200).end();
    await insert('evt_f5', '{"event_id":"evt_f5"}', 'application/json\r\nx-injected: 1');
    await worker.runOnce();
    const row = await deliveryRow(t.db, 'evt_f5', SOURCE);
    expect(row).toMatchObject({ status: 'dead', attempts: 1 });
    expect(row?.last_error).toMatch(/^forward: request could not be built/);
    expect(seen).toHaveLength(0);
  });

  it('the timeout is a deadline: an answer trickled past it fails as a timeout near the deadline', async () => {
    // 200 and headers at once, then a byte every 100 ms for 3 s.
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      let n = 0;
      const timer = setInterval(() => (++n >= 30 || res.destroyed ? (clearInterval(timer), res.end()) : res.write('.')), 100);
      res.on('close', () => clearInterval(timer));
    };
    await insert('evt_f6');
    const t0 = Date.now();
    await worker.runOnce();
    expect(Date.now() - t0).toBeLessThan(2_500);
    expect(await deliveryRow(t.db, 'evt_f6', SOURCE)).toMatchObject({ status: 'pending', last_error: 'forward: no answer within 300 ms' });
  });

  it('errors carry no body, secret or signature: an answer echoing them is recorded as its status only', async () => {
    answer = (req, res) => res.writeHead(500).end(`echo ${String(req.headers['webhook-signature'])} ${SECRET}`);
    await insert('evt_f7', '{"event_id":"evt_f7","card":"4111111111111111"}');
    await worker.runOnce();
    const row = await deliveryRow(t.db, 'evt_f7', SOURCE);
    expect(row?.last_error).toBe('forward: HTTP 500');
    const attempts = await t.db.query<{ error: string | null }>("SELECT error FROM inbox_attempts WHERE event_id = 'evt_f7'");
    for (const a of attempts.rows) {
      expect(a.error ?? '').not.toMatch(/4111|whsec_|v1,/);
    }
  });

  it('the forward policy: private networks are allowed by default; with allow_networks: [] loopback is refused, permanently', async () => {
    answer = (_req, res) => res.writeHead(200).end();
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, content_type) VALUES ($1, 'evt_f8', NULL, 'invoice.paid', '{}', 'application/json')`,
      [PUBLIC_ONLY],
    );
    await worker.runOnce();
    const row = await deliveryRow(t.db, 'evt_f8', PUBLIC_ONLY);
    expect(row).toMatchObject({ status: 'dead', attempts: 1 });
    // The refusal names the key where it lives, with the source's name.
    expect(row?.last_error).toMatch(/forward: .*private, loopback or link-local address \(allow it with sources\.fwd-public-only\.forward\.allow_networks\)/);
    expect(seen).toHaveLength(0);
  });

  it('a forward policy that cannot be built stops the worker at creation, naming the key, not batches later', () => {
    const config = workerTestConfig({}, {});
    // Past the schema (which refuses it since): the worker must not accept it either.
    config.sources['fwd-bad'] = {
      ...config.sources['shop-paymos']!,
      ordering: undefined,
      forward: { url: 'http://127.0.0.1:9/hooks', timeout: 300, secret: SECRET, max_in_flight: 64, allow_networks: ['10.0.0.0/33'] },
    };
    expect(() => createInboxWorker(testContext(t.db, config))).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('sources.fwd-bad.forward.allow_networks.0: "10.0.0.0/33"') }),
    );
  });
});
