import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { evaluateOnce } from '../src/alerts/evaluator.js';
import { createStoreOutageReporter, storeOutages } from '../src/alerts/store-outages.js';
import { parseConfig } from '../src/config/load.js';
import type { Db } from '../src/store/db.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/sink.js';

const TOKEN = 'store-outage-token';
const QUIET_MS = 2_000;
const alerts = parseConfig({ alerts: { enabled: true, rules: { store_unreachable: { quiet_for: '2s' } } } }).alerts;

/**
 * A TCP forwarder standing in front of the real Postgres: cut, it drops every connection and refuses
 * new ones (nothing listens on its port); restored, it listens on the same port again.
 */
async function cuttableForwarder(target: URL): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = async () => {
    const s = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('error', () => {});
        sock.on('close', () => {
          sockets.delete(sock);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    if (s) await new Promise((r) => s.close(r));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}

async function storeUnreachableIncidents(db: Db) {
  return (
    await db.query<{ id: string; closed_at: Date | null; last_value: number; details: Record<string, unknown> }>(
      `SELECT id::text AS id, closed_at, last_value, details FROM incidents WHERE rule = 'store_unreachable' ORDER BY id`,
    )
  ).rows;
}

describe('alerts: store_unreachable, counted in memory while the store is down, one incident once it is back', () => {
  let t: TestDb;
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
    await t?.close();
  });

  it.runIf(onPostgres)(
    'Postgres cut off for real: the API answers 503s, then one incident opens when it is back, and closes once it stays up',
    async () => {
      const target = new URL(t.url!);
      const forwarder = await cuttableForwarder(target);
      cleanups.push(() => forwarder.close());
      const viaForwarder = new URL(t.url!);
      viaForwarder.hostname = '127.0.0.1';
      viaForwarder.port = String(forwarder.port);
      const db = createPostgresDb({ connectionString: viaForwarder.toString(), max: 3 });
      cleanups.push(() => db.close());
      const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-outage-alert-')) } });
      const ctx = testContext(db, { ...config, alerts });
      const app = await buildApp({ ctx, roles: new Set(['api']), adminToken: TOKEN });
      cleanups.push(() => app.close());
      const reporter = createStoreOutageReporter(ctx);
      const get = () => app.inject({ method: 'GET', url: '/api/v1/endpoints', headers: { authorization: `Bearer ${TOKEN}` } });

      expect((await get()).statusCode).toBe(200);
      await forwarder.cut();
      for (let i = 0; i < 3; i++) expect((await get()).statusCode).toBe(503);
      // Still down: nothing can be written, the outage stays in memory; the evaluator (on its own
      // connection to the store) sees nothing yet.
      expect(await reporter.report()).toBe(false);
      expect(await evaluateOnce(t.db, alerts)).toMatchObject({ opened: [], closed: [] });

      await forwarder.restore();
      await waitUntil(() => reporter.report(), 20_000);
      const first = await evaluateOnce(t.db, alerts);
      expect(first.opened.map((r) => [r.rule, r.subject])).toEqual([['store_unreachable', 'store']]);
      const [incident] = await storeUnreachableIncidents(t.db);
      expect(incident!.closed_at).toBeNull();
      expect(incident!.last_value).toBeGreaterThanOrEqual(3);
      expect(Date.parse(String(incident!.details.first_failure_at))).toBeLessThan(Date.parse(String(incident!.details.recovered_at)));
      const announced = await t.db.query<{ event_type: string }>('SELECT event_type FROM outbox_messages WHERE resource_id = $1', [`incident_${incident!.id}`]);
      expect(announced.rows.map((r) => r.event_type)).toEqual(['incident.opened']);

      // While it lasts (within the quiet period): no second incident, no second message.
      expect(await evaluateOnce(t.db, alerts)).toMatchObject({ opened: [], closed: [] });
      expect((await get()).statusCode).toBe(200);
      expect(await reporter.report()).toBe(false);

      await new Promise((r) => setTimeout(r, QUIET_MS + 200));
      const later = await evaluateOnce(t.db, alerts);
      expect(later.closed.map((r) => r.id)).toEqual([incident!.id]);
      expect(later.opened).toEqual([]);
      expect(await storeUnreachableIncidents(t.db)).toHaveLength(1);
      const all = await t.db.query<{ event_type: string }>('SELECT event_type FROM outbox_messages WHERE resource_id = $1 ORDER BY event_type', [
        `incident_${incident!.id}`,
      ]);
      expect(all.rows.map((r) => r.event_type)).toEqual(['incident.closed', 'incident.opened']);
    },
    60_000,
  );

  it('outages reported by two processes make one incident, with their failures summed; it closes when they are old enough', async () => {
    await t.db.query('DELETE FROM store_outages');
    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-outage-alert-')) } });
    const a = testContext(t.db, { ...config, alerts });
    const b = testContext(t.db, { ...config, alerts });
    for (let i = 0; i < 4; i++) storeOutages(a.metrics).note();
    storeOutages(b.metrics).note();
    expect(await createStoreOutageReporter(a).report()).toBe(true);
    expect(await createStoreOutageReporter(b).report()).toBe(true);
    // Both rounds at the same injected time: on a loaded machine the quiet period could pass between them.
    const at = new Date();
    const round = await evaluateOnce(t.db, alerts, at);
    expect(round.opened.map((r) => [r.rule, r.last_value])).toEqual([['store_unreachable', 5]]);
    expect(await evaluateOnce(t.db, alerts, at)).toMatchObject({ opened: [], closed: [] });
    // A round past the quiet period, by its injected time rather than by waiting for it.
    const later = new Date(Date.now() + QUIET_MS + 60_000);
    const closing = await evaluateOnce(t.db, alerts, later);
    expect(closing.closed.map((r) => r.rule)).toEqual(['store_unreachable']);
    expect(closing.closed[0]!.closed_at).toEqual(later);
    expect((await storeUnreachableIncidents(t.db)).filter((r) => r.closed_at === null)).toEqual([]);
  });
});
