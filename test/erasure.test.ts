import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderHandlers } from '../examples/orders/handlers.js';
import type { RunningTekil } from '../src/runtime.js';
import { createScheme } from '../src/signing/index.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { createOrder, deliveryRow, invoiceEvent, ledgerCount, SOURCE, startShopTekil, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';

const TOKEN = 'tk_erasure_admin_token';

/** The fields of the API's answers these tests read. */
interface Answer {
  error?: string;
  id?: string;
  token?: string;
  body?: string;
  body_erased_at?: string | null;
  payload_erased_at?: string | null;
  items?: Array<{ erased_at: string | null }>;
  inbound?: unknown;
  outbound?: unknown;
}
/** What a person's data looks like in a body: it must be readable nowhere once erased. */
const PERSON = 'ayse.yilmaz@example.com';

/**
 * KVKK erasure (docs/erasure.md) through the real HTTP surface on the store under test: bodies go,
 * ids stay as tombstones (a late copy is a duplicate and runs nothing), replays are refused with
 * ERASED, the audit trail records counts and never the data, and a tenant erases only its own.
 */
describe('erasure keeps the dedupe', () => {
  let t: TestDb;
  let running: RunningTekil;
  let dataDir: string;
  let failWarehouse = false;
  const config = workerTestConfig();
  const secret = config.sources[SOURCE]!.secrets[0]!;
  const paymos = createScheme('paymos');

  beforeAll(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-erasure-'));
    running = await startShopTekil({
      db: t.db,
      config,
      adminToken: TOKEN,
      dataDir,
      handlers: orderHandlers({
        source: SOURCE,
        afterPaid: async () => {
          if (failWarehouse) throw new Error('warehouse down');
        },
      }),
    });
  });
  afterAll(async () => {
    await running?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** An invoice event whose body carries a person's e-mail address. */
  const personalEvent = (eventId: string, invoiceId: string, orderId: string) => {
    const parsed = JSON.parse(invoiceEvent({ eventId, invoiceId, orderId, status: 'paid' }).body) as { data: Record<string, unknown> };
    parsed.data.customer = { email: PERSON, name: 'Ayşe Yılmaz' };
    return JSON.stringify(parsed);
  };
  const send = async (body: string) => {
    const res = await request(`${running.url}/in/${SOURCE}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-customer-email': PERSON, ...paymos.sign({ body, secrets: [secret] }) },
    });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  };
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown, token = TOKEN) => {
    const res = await request(`${running.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    let json: Answer = {};
    try {
      json = JSON.parse(text) as Answer;
    } catch {
      // CSV and other downloads
    }
    return { status: res.statusCode, text, json };
  };
  const waitForStatus = (eventId: string, status: string) =>
    waitUntil(async () => (await deliveryRow(t.db, eventId))?.status === status, 15_000, `${eventId} to become ${status}`);
  const attemptsOf = async (eventId: string) =>
    (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM inbox_attempts WHERE source = $1 AND event_id = $2', [SOURCE, eventId])).rows[0]!.n;

  it('erases a delivery: its body is readable nowhere, a late copy is a duplicate that runs nothing, a replay is ERASED', async () => {
    await createOrder(t.db, 'ord_e1');
    const body = personalEvent('evt_e1', 'inv_e1', 'ord_e1');
    expect((await send(body)).json.status).toBe('accepted');
    await waitForStatus('evt_e1', 'done');
    expect(await ledgerCount(t.db, 'ord_e1')).toBe(1);
    const attemptsBefore = await attemptsOf('evt_e1');

    // Irreversible, so it must be confirmed.
    const unconfirmed = await api('POST', '/erasures', { inbound: [{ source: SOURCE, event_id: 'evt_e1' }] });
    expect(unconfirmed.status).toBe(400);
    expect(unconfirmed.json.error).toBe('CONFIRMATION_REQUIRED');
    expect((await t.db.query<{ n: number }>('SELECT length(body)::int AS n FROM inbox_deliveries WHERE event_id = $1', ['evt_e1'])).rows[0]!.n).toBeGreaterThan(
      0,
    );

    const erased = await api('POST', '/erasures', { inbound: [{ source: SOURCE, event_id: 'evt_e1' }], confirm: true });
    expect(erased.status, erased.text).toBe(200);
    expect(erased.json.inbound).toEqual({ erased: 1, already: 0, in_flight: 0 });

    // The store holds no byte of it.
    const row = (
      await t.db.query<{ body: Uint8Array; headers: Record<string, string>; erased_at: Date | null; status: string }>(
        'SELECT body, headers, erased_at, status FROM inbox_deliveries WHERE source = $1 AND event_id = $2',
        [SOURCE, 'evt_e1'],
      )
    ).rows[0]!;
    expect(Buffer.from(row.body).length).toBe(0);
    expect(row.headers).toEqual({});
    expect(row.erased_at).toBeInstanceOf(Date);
    expect(row.status).toBe('done');

    // No route or export shows it; each says it was erased.
    const shown = await api('GET', `/inbox/${SOURCE}/evt_e1`);
    expect(shown.status).toBe(200);
    expect(shown.json.body).toBe('');
    expect(shown.json.body_erased_at).not.toBeNull();
    for (const path of [`/inbox/${SOURCE}/evt_e1`, '/inbox?resource_id=inv_e1', '/inbox/export.csv?resource_id=inv_e1', '/timeline/inv_e1']) {
      const res = await api('GET', path);
      expect(res.text, path).not.toContain(PERSON);
      expect(res.text, path).not.toContain('Ayşe');
    }
    const listed = await api('GET', '/inbox?resource_id=inv_e1');
    expect(listed.json.items![0]!.erased_at).not.toBeNull();
    const csv = await api('GET', '/inbox/export.csv?resource_id=inv_e1');
    expect(csv.text.split('\n')[0]).toContain('erased_at');

    // A late copy of the same (source, event_id): a duplicate, nothing processed again.
    expect((await send(body)).json.status).toBe('duplicate');
    await new Promise((r) => setTimeout(r, 300));
    expect(await ledgerCount(t.db, 'ord_e1')).toBe(1);
    expect(await attemptsOf('evt_e1')).toBe(attemptsBefore);
    expect((await deliveryRow(t.db, 'evt_e1'))!.status).toBe('done');

    // A replay has nothing to send: refused with its own code, forced or not.
    const replay = await api('POST', `/inbox/${SOURCE}/evt_e1/replay`, { force: true });
    expect(replay.status).toBe(410);
    expect(replay.json.error).toBe('ERASED');

    // Erasing again changes nothing and says so.
    expect((await api('POST', '/erasures', { inbound: [{ source: SOURCE, event_id: 'evt_e1' }], confirm: true })).json.inbound).toEqual({
      erased: 0,
      already: 1,
      in_flight: 0,
    });

    // The audit trail: who, what, when, with counts; never the data.
    const audit = await t.db.query<{ actor: string; target: { counts?: Record<string, number> }; status: number }>(
      "SELECT actor, target, status FROM audit_events WHERE route = '/api/v1/erasures' AND status = 200 ORDER BY id",
    );
    expect(audit.rows.length).toBeGreaterThanOrEqual(1);
    expect(audit.rows[0]!.target.counts).toMatchObject({ inbound_erased: 1, inbound_in_flight: 0, outbound_erased: 0 });
    expect(JSON.stringify(audit.rows)).not.toContain(PERSON);
  });

  it('erases every delivery of a resource id; one still in the review queue is left whole and counted in flight', async () => {
    await createOrder(t.db, 'ord_r1');
    await createOrder(t.db, 'ord_r2');
    // The first fails until it is dead (the review queue); the second, for the same invoice, is done.
    failWarehouse = true;
    try {
      expect((await send(personalEvent('evt_r2', 'inv_r', 'ord_r2'))).json.status).toBe('accepted');
      await waitForStatus('evt_r2', 'dead');
    } finally {
      failWarehouse = false;
    }
    expect((await send(personalEvent('evt_r1', 'inv_r', 'ord_r1'))).json.status).toBe('accepted');
    await waitForStatus('evt_r1', 'done');
    const res = await api('POST', '/erasures', { resource_id: 'inv_r', confirm: true });
    expect(res.status, res.text).toBe(200);
    expect(res.json.inbound).toEqual({ erased: 1, already: 0, in_flight: 1 });
    const bodies = await t.db.query<{ event_id: string; n: number }>(
      "SELECT event_id, length(body)::int AS n FROM inbox_deliveries WHERE resource_id = 'inv_r' ORDER BY event_id",
    );
    expect(bodies.rows.map((r) => [r.event_id, r.n > 0])).toEqual([
      ['evt_r1', false],
      ['evt_r2', true],
    ]);
    // Discarded, it is settled: the second erasure takes it.
    expect((await api('POST', `/inbox/${SOURCE}/evt_r2/discard`)).status).toBe(200);
    expect((await api('POST', '/erasures', { resource_id: 'inv_r', source: SOURCE, confirm: true })).json.inbound).toEqual({
      erased: 1,
      already: 1,
      in_flight: 0,
    });
  });

  it('a chosen delivery that does not exist is not found, and nothing is erased', async () => {
    await createOrder(t.db, 'ord_n1');
    expect((await send(personalEvent('evt_n1', 'inv_n1', 'ord_n1'))).json.status).toBe('accepted');
    await waitForStatus('evt_n1', 'done');
    const res = await api('POST', '/erasures', {
      inbound: [
        { source: SOURCE, event_id: 'evt_n1' },
        { source: SOURCE, event_id: 'evt_nope' },
      ],
      confirm: true,
    });
    expect(res.status).toBe(404);
    expect((await api('GET', `/inbox/${SOURCE}/evt_n1`)).json.body).toContain(PERSON);
  });

  it("a tenant erases its own messages and cannot reach another tenant's; an erased message is never replayed", async () => {
    for (const id of ['m_ea', 'm_eb']) expect((await api('POST', '/tenants', { id, name: id })).status).toBe(201);
    const publish = async (tenant: string) => {
      const res = await api('POST', '/messages', { tenant_id: tenant, type: 'invoice.paid', resource_id: 'cust_42', data: { email: PERSON } });
      expect(res.status, res.text).toBe(202);
      return res.json.id as string;
    };
    const msgA = await publish('m_ea');
    const msgB = await publish('m_eb');
    const made = await api('POST', '/tenants/m_ea/tokens', { role: 'operator', name: 'backend' });
    expect(made.status, made.text).toBe(201);
    const tokenA = made.json.token as string;

    // B's message named by A's token: not found, and B's payload untouched.
    const reach = await api('POST', '/erasures', { messages: [msgB], confirm: true }, tokenA);
    expect(reach.status).toBe(404);
    expect((await api('GET', `/messages/${msgB}`)).text).toContain(PERSON);
    // Inbound deliveries are the operators'.
    expect((await api('POST', '/erasures', { inbound: [{ source: SOURCE, event_id: 'evt_e1' }], confirm: true }, tokenA)).status).toBe(400);

    // A resource id in A's scope erases A's message only, though B has one of the same resource id.
    const own = await api('POST', '/erasures', { resource_id: 'cust_42', confirm: true }, tokenA);
    expect(own.status, own.text).toBe(200);
    expect(own.json.outbound).toEqual({ erased: 1, already: 0, in_flight: 0 });
    expect(own.json.inbound).toEqual({ erased: 0, already: 0, in_flight: 0 });
    const shownA = await api('GET', `/messages/${msgA}`, undefined, tokenA);
    expect(shownA.text).not.toContain(PERSON);
    expect(shownA.json.payload_erased_at).not.toBeNull();
    expect((await api('GET', `/messages/${msgB}`)).text).toContain(PERSON);
    const replay = await api('POST', `/messages/${msgA}/replay`, {}, tokenA);
    expect(replay.status).toBe(410);
    expect(replay.json.error).toBe('ERASED');

    const audit = await t.db.query<{ actor: string; tenant_id: string | null; target: { counts?: Record<string, number> } }>(
      "SELECT actor, tenant_id, target FROM audit_events WHERE route = '/api/v1/erasures' AND status = 200 AND tenant_id = 'm_ea'",
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]!.target.counts).toMatchObject({ outbound_erased: 1 });
  });

  it('npx tekil erase does it from the command line, with --confirm', async () => {
    await createOrder(t.db, 'ord_c1');
    expect((await send(personalEvent('evt_c1', 'inv_c1', 'ord_c1'))).json.status).toBe('accepted');
    await waitForStatus('evt_c1', 'done');
    const run = promisify(execFile);
    const env = { ...process.env, TEKIL_URL: running.url, TEKIL_ADMIN_TOKEN: TOKEN };
    const cli = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'erase', ...args], { env });
    await expect(cli('--inbound', `${SOURCE}/evt_c1`)).rejects.toMatchObject({ stderr: expect.stringContaining('CONFIRMATION_REQUIRED') });
    const { stdout } = await cli('--inbound', `${SOURCE}/evt_c1`, '--confirm');
    expect(stdout).toContain('inbound: 1 erased, 0 erased before, 0 in flight');
    expect((await api('GET', `/inbox/${SOURCE}/evt_c1`)).json.body).toBe('');
  }, 60_000);
});
