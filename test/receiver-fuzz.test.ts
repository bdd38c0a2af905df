import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { PAYMOS_SECRET, STANDARD_SECRET, countRows, receiverApp, receiverConfig } from './helpers/receiver.js';
import { createScheme } from '../src/signing/index.js';

/**
 * POST /in/:source fuzzed on sources, headers, bodies, sizes and encodings, signed right, wrong or
 * not at all: every answer is a 2xx or a 4xx with an error code, never a 5xx; the process keeps
 * answering; and the store holds exactly one row per `accepted` answer — a rejected request writes
 * nothing, a duplicate nothing more.
 */
const BODY_LIMIT = 16 * 1024;

const printable = fc.stringMatching(/^[\x20-\x7e]{0,80}$/);
const idValue = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  fc.stringMatching(/^evt_[a-z0-9]{1,12}$/),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
  fc.constantFrom('', '\u0000', 'x\ud800', 'a'.repeat(300), null, 0, -1, 1e21, true, [], {}),
);
/** A body: the shop's envelope with an odd id, any JSON, any bytes, or one past the size limit. */
const bodyArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(idValue, fc.jsonValue({ maxDepth: 2 }))
      .map(([id, data]) =>
        Buffer.from(JSON.stringify({ event_id: typeof id === 'bigint' ? `@@${id}@@` : id, event_type: 'invoice.paid', data }).replace(/"@@(-?\d+)@@"/, '$1')),
      ),
  },
  { weight: 1, arbitrary: fc.json().map((j) => Buffer.from(j)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.integer({ min: BODY_LIMIT - 64, max: BODY_LIMIT + 64 }).map((n) => Buffer.from(`{"event_id":"big","pad":"${'x'.repeat(n)}"}`)) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
);
const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/*',
  'garbage',
  '',
);
const contentEncoding = fc.constantFrom(undefined, 'identity', 'gzip', 'br', 'deflate', 'x-unknown');
const extraHeaders = fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), printable, { maxKeys: 4 });
const signing = fc.constantFrom('valid', 'valid', 'wrong-secret', 'none', 'garbled', 'stale');
const source = fc.constantFrom('shop', 'shop', 'demo', 'nope', '%00', 'sh%C3%B6p', 'a'.repeat(300));

const requestArb = fc.record({
  source,
  body: bodyArb,
  contentType,
  contentEncoding,
  extraHeaders,
  signing,
  id: fc.stringMatching(/^msg_[A-Za-z0-9]{1,16}$/),
  garble: printable,
});

describe('POST /in/:source under generated requests', () => {
  let t: TestDb;
  let app: FastifyInstance;
  const paymos = createScheme('paymos');
  const standard = createScheme('standard');

  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db, receiverConfig({ server: { body_limit: BODY_LIMIT } })));
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('answers 2xx or a coded 4xx, never a 5xx, and writes one row per accepted request', async () => {
    const acceptedBodies = new Set<string>();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const scheme = r.source === 'demo' ? standard : paymos;
        const secret = r.signing === 'wrong-secret' ? 'whsec_d3Jvbmc=' : r.source === 'demo' ? STANDARD_SECRET : PAYMOS_SECRET;
        const timestamp = Math.floor(Date.now() / 1000) - (r.signing === 'stale' ? 3600 : 0);
        let headers: Record<string, string> = r.signing === 'none' ? {} : scheme.sign({ body: r.body, secrets: [secret], id: r.id, timestamp });
        if (r.signing === 'garbled') headers = Object.fromEntries(Object.keys(headers).map((k) => [k, r.garble]));
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        if (r.contentEncoding !== undefined) headers['content-encoding'] = r.contentEncoding;
        const res = await app.inject({ method: 'POST', url: `/in/${r.source}`, payload: r.body, headers: { ...r.extraHeaders, ...headers } });
        expect(res.statusCode, res.body).toBeLessThan(500);
        const answer = res.json() as { status?: string; error?: string };
        if (res.statusCode < 300) {
          expect(['accepted', 'duplicate']).toContain(answer.status);
          if (answer.status === 'accepted') {
            accepted++;
            acceptedBodies.add(r.body.toString('hex'));
          }
        } else {
          expect(answer.error).toMatch(/^[A-Z_]+$/);
        }
      }),
      { numRuns: 250 },
    );
    // Something of each kind happened: the run is not all rejections.
    expect(accepted).toBeGreaterThan(10);
    expect(await countRows(t.db)).toBe(accepted);
    const { rows } = await t.db.query<{ body: Uint8Array }>('SELECT body FROM inbox_deliveries');
    for (const row of rows) expect(acceptedBodies.has(Buffer.from(row.body).toString('hex'))).toBe(true);
    // Still answering after all of it.
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
