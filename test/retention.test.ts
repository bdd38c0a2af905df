import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { createOrder, deliveryRow, invoiceEvent, ledgerCount, SOURCE, startShopTekil, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { orderHandlers } from '../examples/orders/handlers.js';
import type { RunningTekil } from '../src/runtime.js';
import { createRetentionSweeper, type RetentionSweeper } from '../src/retention/sweeper.js';
import { createScheme } from '../src/signing/index.js';

const TOKEN = 'tk_retention_token';

/**
 * Retention through the real surfaces: a processed delivery loses its body after `bodies`, and the
 * provider's late retry of it is still a duplicate with no second effect; replaying a trimmed
 * delivery or message is refused with a code; after `records` the record goes with its attempts.
 * Time passes by moving rows' timestamps back, the sweeper being the one that runs in production.
 */
describe('retention', () => {
  let t: TestDb;
  let running: RunningTekil;
  let sweeper: RetentionSweeper;
  let dataDir: string;
  const config = workerTestConfig(
    { sending: { retention: { bodies: '30d', records: '400d' } }, retention: { interval: '1d', batch_size: 2 } },
    { retention: { bodies: '30d', records: '400d' } },
  );
  const secret = config.sources[SOURCE]!.secrets[0]!;
  const paymos = createScheme('paymos');

  beforeAll(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-retention-'));
    running = await startShopTekil({ db: t.db, config, adminToken: TOKEN, dataDir, handlers: orderHandlers({ source: SOURCE }) });
    sweeper = createRetentionSweeper(running.ctx);
  });
  afterAll(async () => {
    await running?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const send = async (body: string) => {
    const res = await request(`${running.url}/in/${SOURCE}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...paymos.sign({ body, secrets: [secret] }) },
    });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  };
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await request(`${running.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, any> };
  };
  const age = (table: string, column: string, where: string, days: number) =>
    t.db.query(`UPDATE ${table} SET ${column} = ${column} - make_interval(days => ${days}) WHERE ${where}`);

  it('a trimmed delivery keeps its id: the same id again is a duplicate, no second effect; replay is refused; records go after their age', async () => {
    // Five processed deliveries (more than one batch of 2) and one that stays dead.
    const ids = ['evt_r1', 'evt_r2', 'evt_r3', 'evt_r4', 'evt_r5'];
    const bodies = new Map<string, string>();
    for (const [i, eventId] of ids.entries()) {
      await createOrder(t.db, `ord_r${i}`);
      const { body } = invoiceEvent({ eventId, invoiceId: `inv_r${i}`, orderId: `ord_r${i}`, status: 'paid' });
      bodies.set(eventId, body);
      expect((await send(body)).json.status).toBe('accepted');
    }
    const unknownOrder = invoiceEvent({ eventId: 'evt_r_dead', invoiceId: 'inv_rx', orderId: 'ord_missing', status: 'paid' }).body;
    expect((await send(unknownOrder)).status).toBe(200);
    await waitUntil(
      async () => {
        const rows = await Promise.all(ids.map((id) => deliveryRow(t.db, id)));
        return rows.every((r) => r?.status === 'done') && (await deliveryRow(t.db, 'evt_r_dead'))?.status === 'dead';
      },
      10_000,
      'deliveries to settle',
    );

    // 31 days pass for four of them (and the dead one): their bodies go, the fifth keeps its own.
    await age('inbox_deliveries', 'received_at', `event_id <> 'evt_r5'`, 31);
    const counts = await sweeper.sweepOnce();
    expect(counts).toMatchObject({ inboxTrimmed: 4, inboxDeleted: 0 });
    const rows = await t.db.query<{ event_id: string; len: number; headers: object; trimmed: boolean }>(
      `SELECT event_id, length(body) AS len, headers, trimmed_at IS NOT NULL AS trimmed FROM inbox_deliveries WHERE source = $1 ORDER BY event_id`,
      [SOURCE],
    );
    expect(rows.rows.map((r) => [r.event_id, r.trimmed, r.len === 0])).toEqual([
      ['evt_r1', true, true],
      ['evt_r2', true, true],
      ['evt_r3', true, true],
      ['evt_r4', true, true],
      ['evt_r5', false, false],
      // The review queue keeps its bodies: an operator may still replay it.
      ['evt_r_dead', false, false],
    ]);
    expect(rows.rows[0]!.headers).toEqual({});
    const metrics = await (await request(`${running.url}/metrics`)).body.text();
    expect(metrics).toMatch(/tekil_retention_rows_total\{store="inbox",action="trimmed"\} 4\b/);

    // The provider's retry a month later: a duplicate, and the worker does nothing more.
    const again = await send(bodies.get('evt_r1')!);
    expect(again).toMatchObject({ status: 200, json: { status: 'duplicate' } });
    expect((await api('POST', `/inbox/${SOURCE}/evt_r1/replay`, { force: true })).json).toMatchObject({ error: 'BODY_TRIMMED' });
    const detail = await api('GET', `/inbox/${SOURCE}/evt_r1`);
    expect(detail.json).toMatchObject({ status: 'done', body: '', attempts: 1 });
    expect(detail.json.body_trimmed_at).toEqual(expect.any(String));
    expect(await ledgerCount(t.db, 'ord_r0')).toBe(1);
    expect(await deliveryRow(t.db, 'evt_r1')).toMatchObject({ status: 'done', attempts: 1 });
    // A bulk replay of done deliveries passes over the trimmed ones.
    expect((await api('POST', '/inbox/replay', { status: 'done', source: SOURCE, force: true })).json).toEqual({ replayed: 1 });
    await waitUntil(async () => (await deliveryRow(t.db, 'evt_r5'))?.status === 'done', 10_000, 'evt_r5 replayed');
    expect(await ledgerCount(t.db, 'ord_r4')).toBe(1);

    // 400 days on, settled records go with their attempt history; the dead one stays.
    await t.db.query(`INSERT INTO inbox_attempt_history (source, event_id, attempt, started_at, outcome) VALUES ($1, 'evt_r2', 1, now(), 'retry')`, [SOURCE]);
    await age('inbox_deliveries', 'received_at', `event_id IN ('evt_r1', 'evt_r2', 'evt_r3', 'evt_r_dead')`, 400);
    expect(await sweeper.sweepOnce()).toMatchObject({ inboxDeleted: 3 });
    const left = await t.db.query<{ event_id: string }>('SELECT event_id FROM inbox_deliveries WHERE source = $1 ORDER BY event_id', [SOURCE]);
    expect(left.rows.map((r) => r.event_id)).toEqual(['evt_r4', 'evt_r5', 'evt_r_dead']);
    expect((await t.db.query(`SELECT 1 FROM inbox_attempt_history WHERE event_id = 'evt_r2'`)).rows.length).toBe(0);
    expect((await t.db.query(`SELECT 1 FROM inbox_queue WHERE event_id = 'evt_r_dead' AND dead`)).rows.length).toBe(1);
  });

  it('outbox: a settled message loses its payload and kept answers, replay is refused; an open one is kept; records cascade', async () => {
    await t.db.query(`INSERT INTO endpoints (id, url, timeout_ms, max_in_flight) VALUES ('ep_ret', 'http://127.0.0.1:9/', 1000, 1)`);
    for (const [id, status] of [
      ['evt_m1', 'succeeded'],
      ['evt_m2', 'pending'],
    ] as const) {
      await t.db.query(`INSERT INTO outbox_messages (id, event_type, payload) VALUES ($1, 'invoice.paid', $2)`, [id, Buffer.from(`{"id":"${id}"}`)]);
      const d = await t.db.query<{ id: string }>(
        `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, next_attempt_at) VALUES ('default', $1, 'ep_ret', $2, now() + interval '1 day') RETURNING id`,
        [id, status],
      );
      if (status === 'pending') {
        await t.db.query(
          `INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, next_attempt_at) VALUES ('default', $1, 'ep_ret', now() + interval '1 day')`,
          [d.rows[0]!.id],
        );
      }
      await t.db.query(
        `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, status_code, response_body)
         VALUES ('default', $1, $2, 'ep_ret', 1, 'http://127.0.0.1:9/', now(), 5, true, 200, 'thanks')`,
        [d.rows[0]!.id, id],
      );
    }
    await age('outbox_messages', 'created_at', `id IN ('evt_m1', 'evt_m2')`, 31);
    expect(await sweeper.sweepOnce()).toMatchObject({ outboxTrimmed: 1, outboxDeleted: 0 });
    const m1 = await api('GET', '/messages/evt_m1');
    expect(m1.json).toMatchObject({ payload: null });
    expect(m1.json.payload_trimmed_at).toEqual(expect.any(String));
    expect(m1.json.deliveries[0].attempt_history[0]).toMatchObject({ status_code: 200, response_body: null });
    expect((await api('GET', '/messages/evt_m2')).json).toMatchObject({ payload: { id: 'evt_m2' }, payload_trimmed_at: null });
    const replay = await api('POST', '/messages/evt_m1/replay', {});
    expect(replay).toMatchObject({ status: 409, json: { error: 'BODY_TRIMMED' } });
    expect(replay.json.hint).toEqual(expect.any(String));

    await age('outbox_messages', 'created_at', `id IN ('evt_m1', 'evt_m2')`, 400);
    expect(await sweeper.sweepOnce()).toMatchObject({ outboxDeleted: 1 });
    const msgs = await t.db.query<{ id: string }>(`SELECT id FROM outbox_messages WHERE id LIKE 'evt_m%' ORDER BY id`);
    expect(msgs.rows.map((r) => r.id)).toEqual(['evt_m2']);
    expect((await t.db.query(`SELECT 1 FROM outbox_attempts WHERE message_id = 'evt_m1'`)).rows.length).toBe(0);
    expect((await t.db.query(`SELECT 1 FROM outbox_deliveries WHERE message_id = 'evt_m1'`)).rows.length).toBe(0);
    // The open message keeps its delivery and its attempt.
    const kept = await t.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM outbox_deliveries WHERE message_id = 'evt_m2')::int + (SELECT count(*) FROM outbox_attempts WHERE message_id = 'evt_m2')::int AS n`,
    );
    expect(kept.rows[0]!.n).toBe(2);
  });

  it('several sweepers at once: each row is trimmed once, none waits on another', async () => {
    for (let i = 0; i < 9; i++) {
      await t.db.query(
        `INSERT INTO inbox_deliveries (source, event_id, body, status, received_at) VALUES ($1, $2, '\\x7b7d', 'done', now() - interval '40 days')`,
        [SOURCE, `evt_many_${i}`],
      );
    }
    const others = [createRetentionSweeper(running.ctx), createRetentionSweeper(running.ctx)];
    const results = await Promise.all([sweeper.sweepOnce(), ...others.map((s) => s.sweepOnce())]);
    const trimmed = results.reduce((n, r) => n + r.inboxTrimmed, 0);
    expect(trimmed).toBe(9);
    expect((await t.db.query(`SELECT 1 FROM inbox_deliveries WHERE event_id LIKE 'evt_many_%' AND trimmed_at IS NULL`)).rows.length).toBe(0);
  });
});
