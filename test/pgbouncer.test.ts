import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { pino } from 'pino';
import { publish } from '../src/outbox/publish.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createTestDb, onPostgres, postgresUrl, type TestDb } from './helpers/db.js';
import { findPgBouncer, startPgBouncer, type PgBouncer } from './helpers/pgbouncer.js';
import { PAYMOS_SECRET, paymosBody, signPaymos } from './helpers/receiver.js';
import { startSink, type Sink } from './helpers/sink.js';
import { waitUntil } from './helpers/wait.js';

const TOKEN = 'pgbouncer-test-token';
// In CI the proof must run: a missing pgbouncer fails there instead of skipping.
const missing = onPostgres && !findPgBouncer() && !process.env.CI;
if (missing) console.warn('[tekil] pgbouncer is not installed: the PgBouncer test is skipped (apt-get install pgbouncer to run it)');

/**
 * Every role through a real PgBouncer in transaction mode, configured as docs/operations.md advises
 * for PgBouncer before 1.21: no named prepared statements, no `options` startup parameter. A signed
 * webhook is received, processed by an in-process handler that publishes a message in its
 * transaction, and the dispatcher sends that message to a local sink.
 */
describe.skipIf(!onPostgres || missing)('every role through PgBouncer in transaction mode', () => {
  let t: TestDb;
  let bouncer: PgBouncer;
  let sink: Sink;
  let dataDir: string;
  let tekil: RunningTekil | undefined;
  let secondDispatcher: RunningTekil | undefined;
  /** This test's own direct connection, for reading the tables and pg_stat_activity. */
  let probe: pg.Client;

  beforeAll(async () => {
    t = await createTestDb();
    // One server connection for every client: a statement prepared by one client is visible to (and
    // collides with) every other, exactly what transaction pooling does under load, made certain.
    bouncer = await startPgBouncer({ upstream: new URL(postgresUrl!), poolSize: 1 });
    sink = await startSink();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-pgbouncer-data-'));
    probe = new pg.Client({ connectionString: t.url!, application_name: 'tekil-test-probe' });
    await probe.connect();
  });
  afterAll(async () => {
    await secondDispatcher?.close();
    await tekil?.close();
    await probe?.end();
    await sink?.close();
    await bouncer?.stop();
    await t?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('receives, processes and sends (two dispatchers), with every connection to the database coming from the bouncer', async () => {
    const database = new URL(t.url!).pathname.slice(1);
    const config = parseConfig({
      store: { prepared_statements: false, disable_jit: false, pool_size: 4 },
      sources: { shop: { scheme: 'paymos', secrets: [PAYMOS_SECRET], tolerance: 300 } },
      // LISTEN cannot work through transaction pooling (see docs/operations.md): wake-ups come from polling.
      worker: { poll_interval: '100ms' },
      sending: { allow_networks: ['127.0.0.0/8'], dispatcher: { poll_interval: '100ms' } },
    });
    const handlers = defineHandlers().on('shop', 'invoice.paid', async (event, ctx) => {
      const { data } = event.payload as { data: { invoice_id: string } };
      await publish(ctx.tx, { type: 'invoice.settled', resourceId: data.invoice_id, data, idempotencyKey: ctx.idempotencyKey });
    });
    const env = { DATABASE_URL: bouncer.urlFor(database), TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_SECRET_KEY: 'pgbouncer test key', TEKIL_DATA_DIR: dataDir };
    // Errors tekil logs (a claim refused by the bouncer, say) would otherwise only show up as a slow retry.
    const logged: Array<{ level: number; msg: string; err?: { message?: string } }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    tekil = await startTekil({ config, env, handlers, port: 0, host: '127.0.0.1', logger });
    // A second process's dispatcher, as in a deployment of several: its connections share the
    // bouncer's one server connection with the first's, so nothing may rely on per-connection state.
    secondDispatcher = await startTekil({ config, env, roles: ['dispatcher'], port: 0, host: '127.0.0.1', logger });

    const created = await request(`${tekil.url}/api/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: sink.url, event_types: ['invoice.*'] }),
    });
    expect(created.statusCode, await created.body.text()).toBe(201);

    // Several webhooks, so the roles' statements interleave on the bouncer's server connection.
    const ids = Array.from({ length: 20 }, (_, i) => `evt_pgb_${i}`);
    for (const id of ids) {
      const body = paymosBody(id);
      const res = await request(`${tekil.url}/in/shop`, { method: 'POST', body, headers: signPaymos(body) });
      expect(await res.body.json()).toEqual({ status: 'accepted' });
    }

    const count = async (sql: string): Promise<number> => Number((await probe.query<{ n: string }>(sql)).rows[0]!.n);
    await waitUntil(
      async () => (await count("SELECT count(*) AS n FROM inbox_deliveries WHERE status = 'done'")) === ids.length,
      20_000,
      'the webhooks to be processed',
    );
    await sink.waitFor(ids.length, 20_000);
    await waitUntil(
      async () => (await count("SELECT count(*) AS n FROM outbox_deliveries WHERE status = 'succeeded'")) === ids.length,
      20_000,
      'the messages to be sent',
    );
    expect(new Set(sink.requests.map((r) => JSON.parse(r.body.toString()).type))).toEqual(new Set(['invoice.settled']));
    expect(await count('SELECT count(*) AS n FROM inbox_deliveries WHERE last_error IS NOT NULL')).toBe(0);
    expect(await count('SELECT count(*) AS n FROM outbox_attempts WHERE status_code IS DISTINCT FROM 200')).toBe(0);

    // The API's group commit through the bouncer: concurrent requests share publishing transactions
    // (its statement unnamed here). A type no endpoint takes, so the deliveries above stay the only ones.
    const published = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await request(`${tekil!.url}/api/v1/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': `order-${i % 10}` },
          body: JSON.stringify({ type: 'order.placed', resource_id: `ord_${i % 10}` }),
        });
        return { status: res.statusCode, id: ((await res.body.json()) as { id: string }).id, key: `order-${i % 10}` };
      }),
    );
    expect(published.map((p) => p.status)).toEqual(Array(20).fill(202));
    for (const p of published) expect(p.id).toBe(published.find((q) => q.key === p.key)!.id); // one message per key
    expect(await count("SELECT count(*) AS n FROM outbox_messages WHERE event_type = 'order.placed'")).toBe(10);

    // Every backend on this database other than the probe is one of the bouncer's server connections.
    const fromBouncer = new Set(await bouncer.serverPorts());
    const { rows } = await probe.query<{ client_port: number; application_name: string }>(
      'SELECT client_port, application_name FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    expect(rows.filter((r) => !fromBouncer.has(r.client_port))).toEqual([]);
    // (This server runs with autovacuum off, which every process says once at start: a warning, not a fault.)
    expect(logged.filter((l) => !l.msg.startsWith('the store runs with autovacuum off')).map((l) => `${l.msg}: ${l.err?.message ?? ''}`)).toEqual([]);
  }, 60_000);

  it('tekil migrate goes through it with the same store settings', async () => {
    const database = new URL(t.url!).pathname.slice(1);
    const configPath = join(dataDir, 'tekil.yaml');
    writeFileSync(configPath, 'store:\n  prepared_statements: false\n  disable_jit: false\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'migrate', '--config', configPath], {
      env: { ...process.env, DATABASE_URL: bouncer.urlFor(database), TEKIL_DATA_DIR: dataDir },
    });
    expect(stdout).toBe('up to date\n');
  });
});
