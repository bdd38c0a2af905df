import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExampleSchema } from '../examples/orders/handlers.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';
import { PAYMOS_SECRET, signPaymos } from './helpers/receiver.js';
import { startSink, type Sink } from './helpers/sink.js';
import { spawnTekil, type TekilProcess } from './helpers/tekil-process.js';
import { waitUntil } from './helpers/wait.js';

const EVENTS = 150;
const COPIES_PER_RECEIVER = 2;

const config = `
sources:
  shop-paymos:
    scheme: paymos
    secrets: ["${PAYMOS_SECRET}"]
    event_id: body:event_id
    resource_id: body:data.invoice_id
    event_type: body:event_type
worker: { poll_interval: 200ms }
sending:
  allow_networks: ["127.0.0.0/8"]
  dispatcher: { poll_interval: 100ms }
`;

function invoicePaid(i: number): string {
  return JSON.stringify({
    event_id: `evt_mp_${i}`,
    event_type: 'invoice.paid',
    occurred_at: '2026-12-01T08:00:00Z',
    data: { invoice_id: `inv_mp_${i}`, status: 'paid', amount: '10.00', currency: 'EUR' },
  });
}

// Separate OS processes over one server database: PGlite is one process's store.
describe.skipIf(!onPostgres)('separate processes: 2 receivers, 2 workers and a dispatcher over one Postgres', () => {
  let t: TestDb;
  let dir: string;
  let sink: Sink;
  const processes: TekilProcess[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    await createExampleSchema(t.db);
    sink = await startSink();
    // The harness seals the endpoint secret with this key; the dispatcher process gets the same one.
    await outboxHarness(t.db).endpoints.create(t.db, { url: sink.url, event_types: ['invoice.credited'] });
    dir = mkdtempSync(join(tmpdir(), 'tekil-multi-'));
    writeFileSync(join(dir, 'tekil.yaml'), config);
    const env = { DATABASE_URL: t.url!, TEKIL_DATA_DIR: dir, TEKIL_SECRET_KEY: 'test secret key' };
    // Receivers would default to one per core; one each here, so the test picks which receiver gets each copy.
    const start = (role: string, extra: string[] = []) => spawnTekil(['-c', join(dir, 'tekil.yaml'), '-p', '0', '--role', role, ...extra], env);
    const handlers = ['--handlers', 'examples/orders/tekil-handlers.ts'];
    processes.push(
      ...(await Promise.all([
        start('receiver', ['--processes', '1']),
        start('receiver', ['--processes', '1']),
        start('worker', handlers),
        start('worker', handlers),
        start('dispatcher'),
      ])),
    );
  }, 90_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await sink?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the same ids racing across both receivers: one row, one effect and one outbox message per id, zero 503s', async () => {
    const receivers = [processes[0]!.url, processes[1]!.url];
    const agent = new Agent({ connections: 32 });
    const statuses = new Map<number, number>();
    const verdicts = new Map<string, string[]>();
    const send = async (url: string, i: number) => {
      const body = invoicePaid(i);
      const res = await request(`${url}/in/shop-paymos`, { method: 'POST', body, headers: signPaymos(body), dispatcher: agent });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const { status } = (await res.body.json()) as { status?: string };
      verdicts.set(`evt_mp_${i}`, [...(verdicts.get(`evt_mp_${i}`) ?? []), status ?? `http ${res.statusCode}`]);
    };
    // Every copy of an event at once, on both receivers, ten events at a time.
    for (let first = 0; first < EVENTS; first += 10) {
      const copies: Promise<void>[] = [];
      for (let i = first; i < first + 10; i++) {
        for (const url of receivers) for (let c = 0; c < COPIES_PER_RECEIVER; c++) copies.push(send(url, i));
      }
      await Promise.all(copies);
    }
    await agent.close();
    expect(Object.fromEntries(statuses)).toEqual({ 200: EVENTS * 2 * COPIES_PER_RECEIVER });
    for (const [id, answers] of verdicts) {
      expect(
        answers.filter((a) => a === 'accepted'),
        id,
      ).toHaveLength(1);
      expect(
        answers.filter((a) => a === 'duplicate'),
        id,
      ).toHaveLength(2 * COPIES_PER_RECEIVER - 1);
    }

    await waitUntil(
      async () => {
        const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE status = 'done'`);
        return rows[0]!.n === EVENTS;
      },
      20_000,
      'every delivery done',
    );
    const rows = await t.db.query<{ n: number; ids: number }>(`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS ids FROM inbox_deliveries`);
    expect(rows.rows[0]).toEqual({ n: EVENTS, ids: EVENTS });
    const ledger = await t.db.query<{ event_id: string; n: number }>(`SELECT event_id, count(*)::int AS n FROM example_ledger GROUP BY event_id`);
    expect(ledger.rows).toHaveLength(EVENTS);
    expect(ledger.rows.every((r) => r.n === 1)).toBe(true);
    const credited = await t.db.query<{ n: number; effects: number }>(`SELECT count(*)::int AS n, sum(paid_effects)::int AS effects FROM example_invoices`);
    expect(credited.rows[0]).toEqual({ n: EVENTS, effects: EVENTS });

    // Each effect published one outbox message in its transaction; the dispatcher delivered them all.
    await waitUntil(() => new Set(sink.requests.map((r) => r.headers['webhook-id'])).size === EVENTS, 20_000, 'every message at the sink');
    const messages = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_messages WHERE event_type = 'invoice.credited'`);
    expect(messages.rows[0]!.n).toBe(EVENTS);
  }, 60_000);
});
