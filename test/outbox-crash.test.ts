import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

const SECRET_KEY = 'test secret key'; // the harness's key, so both processes read the same secrets

function startDispatcherProcess(databaseUrl: string): ChildProcess {
  const dir = mkdtempSync(join(tmpdir(), 'tekil-dispatcher-'));
  const config = join(dir, 'tekil.yaml');
  writeFileSync(
    config,
    ['sending:', '  allow_networks: ["127.0.0.0/8"]', '  dispatcher:', '    poll_interval: 100ms', '    lease_margin: 500ms', ''].join('\n'),
  );
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start', '--role', 'dispatcher', '-p', '0', '-c', config], {
    env: { ...process.env, DATABASE_URL: databaseUrl, TEKIL_SECRET_KEY: SECRET_KEY, TEKIL_DATA_DIR: dir, TEKIL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe.skipIf(!onPostgres)('outbox: dispatcher crashes and several dispatchers', () => {
  let t: TestDb;
  let h: OutboxHarness;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db, {});
  });
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await t?.close();
  });

  it('a dispatcher killed with SIGKILL mid-send loses nothing: the delivery is retried and every attempt recorded', async () => {
    const sink: Sink = await startSink((n) => (n === 1 ? { hang: true } : { status: 200 }));
    cleanups.push(() => sink.close());
    await h.endpoints.create(t.db, { url: sink.url, event_types: ['crash.test'], timeout: '1s' });
    const { id } = await t.db.transaction((tx) => publish(tx, { type: 'crash.test', data: { n: 1 } }));

    const child = startDispatcherProcess(t.url!);
    cleanups.push(() => child.kill('SIGKILL'));
    await sink.waitFor(1, 20_000); // the child is mid-send: the receiver holds the request open
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const mid = await t.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM outbox_deliveries WHERE message_id = $1', [id]);
    expect(mid.rows[0]).toEqual({ status: 'sending', attempts: 1 });

    const survivor: Dispatcher = h.newDispatcher();
    cleanups.push(() => survivor.stop());
    await survivor.start();
    await waitUntil(async () => {
      const { rows } = await t.db.query<{ status: string }>('SELECT status FROM outbox_deliveries WHERE message_id = $1', [id]);
      return rows[0]!.status === 'succeeded';
    }, 10_000);
    expect(sink.requests.map((r) => r.headers['webhook-id'])).toEqual([id, id]);
    const { rows } = await t.db.query<{ attempt: number; succeeded: boolean; error: string | null }>(
      'SELECT attempt, succeeded, error FROM outbox_attempts WHERE message_id = $1 ORDER BY attempt',
      [id],
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ attempt: 1, succeeded: false });
    expect(rows[0]!.error).toMatch(/lease expired/);
    expect(rows[1]).toMatchObject({ attempt: 2, succeeded: true });
  }, 40_000);

  it('three dispatchers on one database never send one attempt twice', async () => {
    // Slow answers and no in-flight cap: the three dispatchers, woken by the same commit, claim side by
    // side instead of one finishing the lot before the others look (the sharing asserted below).
    const sink = await startSink(() => ({ status: 200, delayMs: 20 }));
    cleanups.push(() => sink.close());
    const ep = await h.endpoints.create(t.db, { url: sink.url, event_types: ['many.*'], max_in_flight: 1000 });
    const dispatchers = [h.newDispatcher(), h.newDispatcher(), h.newDispatcher()];
    for (const d of dispatchers) {
      cleanups.push(() => d.stop());
      await d.start();
    }
    const total = 600;
    await t.db.transaction(async (tx) => {
      for (let i = 0; i < total; i++) await publish(tx, { type: 'many.event', data: { i } });
    });
    await sink.waitFor(total, 20_000);
    // Every request a dispatcher sends is recorded as an attempt once its answer is in: when the
    // attempts reach the total, any second send of one delivery would already be at the sink.
    await waitUntil(async () => {
      const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM outbox_attempts WHERE endpoint_id = $1', [ep.endpoint.id]);
      return Number(rows[0]!.n) >= total;
    });
    const ids = sink.requests.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    const per = await t.db.query<{ dispatcher: string; n: number; ok: number }>(
      'SELECT dispatcher, count(*) AS n, count(*) FILTER (WHERE succeeded) AS ok FROM outbox_attempts WHERE endpoint_id = $1 GROUP BY dispatcher',
      [ep.endpoint.id],
    );
    expect(per.rows.reduce((sum, r) => sum + Number(r.ok), 0)).toBe(total);
    expect(per.rows.length).toBeGreaterThan(1); // the work was shared
  });
});
