import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startFakeStripe, type FakeApi, type StripeEventFixture } from './helpers/provider-apis.js';
import { waitUntil } from './helpers/wait.js';
import { parseConfig } from '../src/config/index.js';
import { runReconcile } from '../src/reconcile/run.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createScheme } from '../src/signing/index.js';
import { defineHandlers } from '../src/worker/handlers.js';

const SOURCE = 'stripe';
const SECRET = 'whsec_stripe_reconcile_test';
const KEY = 'sk_test_reconcile';
const TOTAL = 500;
const start = Math.floor(Date.parse('2026-11-28T00:00:00Z') / 1000);

/** 500 events, one a minute; every sixth-ish one (80 in all) never reaches tekil as a webhook. */
const events: StripeEventFixture[] = Array.from({ length: TOTAL }, (_, i) => ({
  id: `evt_${String(i).padStart(4, '0')}`,
  type: i % 3 === 0 ? 'invoice.payment_failed' : 'invoice.paid',
  created: start + i * 60,
  data: { object: { id: `in_${String(i).padStart(4, '0')}`, object: 'invoice', status: 'paid', amount_paid: 1000 + i } },
}));
const dropped = new Set(events.filter((_, i) => i % 6 === 1 && i < 6 * 80).map((e) => e.id));

describe('reconcile against a fake Stripe events API', () => {
  let t: TestDb;
  let stripe: FakeApi;
  let running: RunningTekil;
  let dataDir: string;
  const deps = () => ({ db: t.db, config: running.ctx.config, logger: pino({ level: 'silent' }) });
  const window = { start: new Date(start * 1000), end: null };
  const count = async (sql: string, params: unknown[] = []) => (await t.db.query<{ n: number }>(sql, params)).rows[0]!.n;

  // At most 32 connections, as a provider's client pool keeps: one address holds at most a tenth of
  // server.max_connections (50 by default), and a pool that grew past it would find its idlest closed.
  const pool = new Agent({ connections: 32 });
  const sendWebhook = async (e: StripeEventFixture) => {
    const body = JSON.stringify({ ...e, object: 'event', livemode: false });
    const headers = createScheme('stripe').sign({ body, secrets: [SECRET] });
    const res = await request(`${running.url}/in/${SOURCE}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
      dispatcher: pool,
    });
    return (await res.body.json()) as { status: string };
  };

  beforeAll(async () => {
    t = await createTestDb();
    await t.db.exec('CREATE TABLE stripe_effects (event_id text PRIMARY KEY, invoice text NOT NULL)');
    stripe = await startFakeStripe({ key: KEY, events: () => events });
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-reconcile-stripe-'));
    const config = parseConfig({
      worker: { batch_size: 100, poll_interval: '20ms' },
      sources: { [SOURCE]: { scheme: 'stripe', secrets: [SECRET], tolerance: 0, reconcile: { provider: 'stripe', api_key: KEY, api_base: stripe.url } } },
    });
    // One effect per event: a second run of the same event would violate the primary key.
    const handlers = defineHandlers().on(SOURCE, '*', async (event, ctx) => {
      const invoice = (event.payload as { data: { object: { id: string } } }).data.object.id;
      await ctx.tx.query('INSERT INTO stripe_effects (event_id, invoice) VALUES ($1, $2)', [event.eventId, invoice]);
    });
    const start = (roles: Array<'receiver' | 'worker'>) =>
      startTekil({ config, roles, port: 0, host: '127.0.0.1', logger: pino({ level: 'silent' }), db: t.db, env: { TEKIL_DATA_DIR: dataDir }, handlers });
    // The webhooks are received first and processed after: on the embedded store's one connection,
    // receiving and processing at once take turns and double the set-up time.
    running = await start(['receiver']);
    const delivered = events.filter((e) => !dropped.has(e.id));
    for (let i = 0; i < delivered.length; i += 70) {
      const answers = await Promise.all(delivered.slice(i, i + 70).map(sendWebhook));
      expect(answers.every((a) => a.status === 'accepted')).toBe(true);
    }
    await running.close();
    running = await start(['receiver', 'worker']);
    await waitUntil(async () => (await count('SELECT count(*)::int AS n FROM stripe_effects')) === delivered.length, 20_000, 'the webhooks to be processed');
  });
  afterAll(async () => {
    await running?.close();
    await pool.close();
    await stripe?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports exactly the 80 events that never arrived as missing, and changes nothing without --apply', async () => {
    expect(dropped.size).toBe(80);
    const before = await count('SELECT count(*)::int AS n FROM inbox_deliveries');
    const report = await runReconcile(deps(), { source: SOURCE, window, apply: false, trigger: 'cli' });
    expect(report.counts).toEqual({ missing: 80, unprocessed: 0, state: 0, extra: 0 });
    expect(new Set(report.findings.map((f) => f.event_id))).toEqual(dropped);
    expect(report.findings.every((f) => f.action === 'none')).toBe(true);
    expect(report.run).toMatchObject({ status: 'completed', items: TOTAL, pages: 5 });
    // Stripe pages by starting_after with the last id of the page before.
    expect(stripe.requests.filter((r) => r.url.searchParams.has('starting_after'))).toHaveLength(4);
    expect(await count('SELECT count(*)::int AS n FROM inbox_deliveries')).toBe(before);
    expect(await count('SELECT count(*)::int AS n FROM stripe_effects')).toBe(before);
  });

  it('--apply records them under their own ids, the worker processes each once, a second run reports zero', async () => {
    const report = await runReconcile(deps(), { source: SOURCE, window, apply: true, trigger: 'cli' });
    expect(report.counts.missing).toBe(80);
    expect(report.findings.every((f) => f.action === 'recorded')).toBe(true);
    await waitUntil(async () => (await count('SELECT count(*)::int AS n FROM stripe_effects')) === TOTAL, 20_000, 'the recorded events to be processed');
    // Under the real evt_ ids, each marked as recorded by reconcile, each with its finding row.
    const recorded = await t.db.query<{ event_id: string; status: string }>(
      `SELECT d.event_id, d.status FROM inbox_deliveries d WHERE d.source = $1 AND d.headers ? 'x-tekil-reconcile'`,
      [SOURCE],
    );
    expect(new Set(recorded.rows.map((r) => r.event_id))).toEqual(dropped);
    expect(recorded.rows.every((r) => r.status === 'done')).toBe(true);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM inbox_deliveries d WHERE d.headers ? 'x-tekil-reconcile'
           AND NOT EXISTS (SELECT 1 FROM reconcile_findings f WHERE f.event_id = d.event_id AND f.action = 'recorded')`,
      ),
    ).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM stripe_effects WHERE event_id = ANY($1::text[])', [[...dropped]])).toBe(80);

    const again = await runReconcile(deps(), { source: SOURCE, window, apply: true, trigger: 'cli' });
    expect(again.counts).toEqual({ missing: 0, unprocessed: 0, state: 0, extra: 0 });
  });

  it('a late webhook for a recorded event is answered duplicate and has no second effect', async () => {
    const late = events.find((e) => dropped.has(e.id))!;
    expect(await sendWebhook(late)).toMatchObject({ status: 'duplicate' });
    expect(await count('SELECT count(*)::int AS n FROM stripe_effects WHERE event_id = $1', [late.id])).toBe(1);
  });

  it('an event tekil processed that Stripe does not list is an extra', async () => {
    const forged: StripeEventFixture = {
      id: 'evt_forged',
      type: 'invoice.paid',
      created: start + 10,
      data: { object: { id: 'in_forged', object: 'invoice' } },
    };
    expect(await sendWebhook(forged)).toEqual({ status: 'accepted' });
    await waitUntil(async () => (await count(`SELECT count(*)::int AS n FROM stripe_effects WHERE event_id = 'evt_forged'`)) === 1, 10_000, 'the forged event');
    const report = await runReconcile(deps(), { source: SOURCE, window, apply: true, trigger: 'cli' });
    expect(report.counts).toEqual({ missing: 0, unprocessed: 0, state: 0, extra: 1 });
    expect(report.findings[0]).toMatchObject({ kind: 'extra', event_id: 'evt_forged', resource_id: 'in_forged', action: 'none' });
  });
});
