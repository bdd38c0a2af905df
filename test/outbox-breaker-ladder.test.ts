import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { HELD_AT_LAST_ATTEMPT } from '../src/outbox/breaker-hold.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

/**
 * The circuit breaker is a guest of the ladder (docs/sending.md, "The circuit breaker"): while it is
 * open, each delivery keeps its own published schedule (fails at the time its last attempt is due, its
 * attempts counted only when really sent), and a receiver that came back gets a new message within the
 * ladder's first gap, not at a probe hours away. The ladders run in seconds (real time, time_scale 1),
 * so a loaded machine's lateness of a few hundred milliseconds stays far inside the bounds.
 */
describe('outbox: the circuit breaker keeps each delivery on its ladder', () => {
  let t: TestDb;
  const sinks: Sink[] = [];
  const dispatchers: Dispatcher[] = [];

  beforeAll(async () => {
    t = await createTestDb();
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  });
  afterAll(async () => {
    await Promise.all(sinks.map((s) => s.close()));
    await t?.close();
  });

  async function publishMany(type: string, count: number): Promise<void> {
    await t.db.transaction(async (tx) => {
      for (let i = 0; i < count; i++) await publish(tx, { type, data: { i } });
    });
  }

  it('fails every held delivery when its own last attempt is due, sending no more than one probe at a time', async () => {
    const sink = await startSink(() => ({ status: 500 }));
    sinks.push(sink);
    const h = outboxHarness(t.db, { time_scale: 1, circuit_breaker: { failures: 3 } });
    // 4 attempts: at 0, ~2 s, ~4 s, ~6 s (±10 % a gap); the last one due at most 6.6 s after the first.
    const { endpoint } = await h.endpoints.create(t.db, { url: sink.url, event_types: ['breaker.ladder'], ladder: ['2s', '2s', '2s'] });
    await publishMany('breaker.ladder', 12);
    const d = h.newDispatcher({ announceExhausted: true });
    dispatchers.push(d);
    await d.start();

    await waitUntil(
      async () =>
        (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_deliveries WHERE endpoint_id = $1 AND status = 'failed'", [endpoint.id]))
          .rows[0]!.n === 12,
      30_000,
      'every delivery failed',
    );
    const { rows } = await t.db.query<{ id: string; attempts: number; recorded: number; first_ms: number; failed_ms: number; last_error: string }>(
      `SELECT d.id::text AS id, d.attempts, d.last_error,
         (SELECT count(*)::int FROM outbox_attempts a WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.id) AS recorded,
         (SELECT extract(epoch FROM min(a.started_at)) * 1000 FROM outbox_attempts a WHERE a.tenant_id = d.tenant_id AND a.delivery_id = d.id)::double precision AS first_ms,
         (extract(epoch FROM d.completed_at) * 1000)::double precision AS failed_ms
       FROM outbox_deliveries d WHERE d.endpoint_id = $1`,
      [endpoint.id],
    );
    for (const r of rows) {
      // Each attempt counted was sent, and each delivery failed on its schedule: by its last rung's time
      // (6.6 s after its first attempt at most), with 4 s for the hold's round, a probe's round trip and
      // a loaded machine (without the hold they were still pending 30 s later).
      expect(r.attempts, r.id).toBe(r.recorded);
      expect(r.failed_ms - r.first_ms, r.id).toBeLessThan(6_600 + 4_000);
    }
    // The breaker held some: a delivery held at its last rung failed on time with fewer attempts sent,
    // and says why (one held earlier may have been tried as a probe at its last rung).
    const heldAtLast = rows.filter((r) => r.last_error === HELD_AT_LAST_ATTEMPT);
    expect(heldAtLast.length).toBeGreaterThan(0);
    for (const r of heldAtLast) expect(r.attempts).toBeLessThan(4);
    // Each given-up delivery is announced (message.attempts_exhausted), held or not.
    const announced = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_messages WHERE event_type = 'message.attempts_exhausted' AND idempotency_key = ANY ($1::text[])`,
      [rows.map((r) => `tekil-attempts-exhausted:${r.id}`)],
    );
    expect(announced.rows[0]!.n).toBe(12);
    // No hammering: after the 12 first attempts, at most one probe every 2 s (the ladder's shortest gap)
    // for the ~6 s the ladders ran, far fewer than the 36 retries without the breaker.
    expect(sink.requests.length - 12).toBeLessThanOrEqual(8);
  }, 60_000);

  it('sends a new message to a receiver that came back within the ladder’s first gap, not at a probe as far away as its last gap', async () => {
    let recovered = false;
    const sink = await startSink(() => ({ status: recovered ? 200 : 500 }));
    sinks.push(sink);
    const h = outboxHarness(t.db, { time_scale: 1, circuit_breaker: { failures: 2 } });
    // The last gap is 60 s: a breaker that stepped its probes along the ladder waited that long.
    const { endpoint } = await h.endpoints.create(t.db, {
      url: sink.url,
      event_types: ['breaker.back', 'breaker.new'],
      ladder: ['200ms', '400ms', '800ms', '1600ms', '60s', '60s', '60s', '60s'],
      max_in_flight: 1,
    });
    await publishMany('breaker.back', 12);
    const d = h.newDispatcher();
    dispatchers.push(d);
    await d.start();
    // Failed attempts in a row well past the threshold: a breaker that stepped its probes along the
    // ladder by the streak would now wait its last gap (60 s) between probes.
    await waitUntil(
      async () => (await t.db.query<{ n: number }>('SELECT failed_attempts_in_row AS n FROM endpoints WHERE id = $1', [endpoint.id])).rows[0]!.n >= 6,
      30_000,
      'a long failing streak',
    );
    recovered = true;
    const publishedAt = Date.now();
    await publishMany('breaker.new', 1);
    await waitUntil(async () => sink.requests.some((r) => JSON.parse(r.body.toString()).type === 'breaker.new'), 20_000, 'the new message delivered');
    const got = sink.requests.find((r) => JSON.parse(r.body.toString()).type === 'breaker.new')!;
    // Within a couple of its first gaps (200 ms) and the breaker's, with room for a loaded machine.
    expect(got.at - publishedAt).toBeLessThan(5_000);
    // Its success closed the breaker.
    await waitUntil(
      async () =>
        (await t.db.query<{ n: number }>('SELECT failed_attempts_in_row AS n FROM endpoints WHERE id = $1 AND probe_at IS NULL', [endpoint.id])).rows[0]?.n ===
        0,
      10_000,
      'the breaker closed',
    );
  }, 60_000);
});
