import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { isTekilError } from '../src/errors.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { publish } from '../src/outbox/publish.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

/**
 * One endpoint whose ladder schedules its next attempt beyond what Postgres can hold (stored before
 * the bound, or written behind tekil's back) must not hold back the other endpoints' recorded
 * attempts: the group of completions is written again row by row and the bad row is failed.
 */
describe('outbox: a completion the store refuses is isolated', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let dispatcher: Dispatcher;
  const sinks: Sink[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    // Real-time ladders: the bad gap must reach the store unscaled. A long lease: on a loaded machine a
    // slow recording must not let another claim send a healthy delivery again (nothing here expires one).
    h = outboxHarness(t.db, { time_scale: 1, dispatcher: { lease_margin: '60s' } });
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all(sinks.map((s) => s.close()));
    await t?.close();
  });

  it('refuses a ladder gap or a retry wait beyond 30 days, at the API and in config', async () => {
    const s = await startSink();
    sinks.push(s);
    for (const ladder of [['99999999999d'], ['31d'], ['1m', '30d', '745h']]) {
      const err = await h.endpoints.create(t.db, { url: s.url, ladder }).catch((e: unknown) => e);
      expect(isTekilError(err, 'VALIDATION_FAILED'), JSON.stringify(ladder)).toBe(true);
    }
    expect((await h.endpoints.create(t.db, { url: s.url, ladder: ['30d'], event_types: ['other.type'] })).endpoint.id).toMatch(/^ep_/);
    const bad = [
      { sending: { ladder: ['99999999999d'] } },
      { sending: { retry_after_max: '31d' } },
      { worker: { retry_after_max: '31d' } },
      { sources: { s: { scheme: 'standard', secrets: ['whsec_dGVzdA=='], retry: { cap: '99999999999d' } } } },
      { sources: { s: { scheme: 'standard', secrets: ['whsec_dGVzdA=='], retry: { base: '31d' } } } },
      { worker: { lease: '99999999999d' } },
    ];
    for (const input of bad) expect(() => parseConfig(input), JSON.stringify(input)).toThrow(/at most/);
  });

  it('a bad row next to healthy ones: the healthy ones are sent once and recorded, the bad one is failed', { timeout: 120_000 }, async () => {
    const healthy = await startSink(() => ({ status: 200 }));
    const failing = await startSink(() => ({ status: 500, body: 'down' }));
    sinks.push(healthy, failing);
    const ok = (await h.endpoints.create(t.db, { url: healthy.url, event_types: ['poison.test'] })).endpoint.id;
    // Its own ladder (not inherited: a dispatcher's start would write the file's over an inherited one),
    // then written behind the API's back: the next attempt 99999999999 days away overflows an interval.
    const bad = (await h.endpoints.create(t.db, { url: failing.url, event_types: ['poison.test'], ladder: ['1m'] })).endpoint.id;
    await t.db.query(`UPDATE endpoints SET ladder = '["99999999999d"]' WHERE id = $1`, [bad]);

    const messages = 50;
    await t.db.transaction(async (tx) => {
      for (let i = 0; i < messages; i++) await publish(tx, { type: 'poison.test', data: { i } });
    });
    dispatcher = h.newDispatcher();
    await dispatcher.start();

    const statuses = async (endpointId: string) =>
      (await t.db.query<{ status: string }>('SELECT status FROM outbox_deliveries WHERE endpoint_id = $1', [endpointId])).rows.map((r) => r.status);
    await waitUntil(async () => (await statuses(ok)).filter((s) => s === 'succeeded').length === messages, 60_000, 'healthy deliveries to succeed');
    await waitUntil(async () => (await statuses(bad)).filter((s) => s === 'failed').length === messages, 60_000, 'bad deliveries to fail');

    // Exactly once each: nothing was sent again because its success went unrecorded.
    const ids = healthy.requests.map((r) => (JSON.parse(r.body.toString()) as { event_id: string }).event_id);
    expect(ids).toHaveLength(messages);
    expect(new Set(ids).size).toBe(messages);
    expect(failing.requests).toHaveLength(messages);
    const { rows } = await t.db.query<{ endpoint_id: string; n: number }>(
      'SELECT endpoint_id, count(*)::int AS n FROM outbox_attempts GROUP BY endpoint_id ORDER BY endpoint_id',
    );
    expect(Object.fromEntries(rows.map((r) => [r.endpoint_id, r.n]))).toEqual({ [ok]: messages, [bad]: messages });
    const errors = (await t.db.query<{ last_error: string }>('SELECT DISTINCT last_error FROM outbox_deliveries WHERE endpoint_id = $1', [bad])).rows;
    expect(errors).toHaveLength(1);
    expect(errors[0]!.last_error).toMatch(/^HTTP 500; not recorded as it was: the store refused its values \(SQLSTATE 22/);
    // The isolation settled everything: nothing is left in flight or waiting on a lease.
    expect((await t.db.query('SELECT 1 FROM outbox_deliveries WHERE status = $1', ['sending'])).rows).toHaveLength(0);
  });
});
