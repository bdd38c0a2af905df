import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { testContext } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';

const SECRET = 'whsec_dGVzdC1zZWNyZXQ=';
const source = (extra: Record<string, unknown> = {}) => ({ scheme: 'standard', secrets: [SECRET], ...extra });

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}

function urlOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

/** `n` pending deliveries of `src`, received (and due) before anything inserted later. */
async function backlog(t: TestDb, src: string, n: number): Promise<void> {
  await t.db.query(
    `INSERT INTO inbox_deliveries (source, event_id, event_type, body, content_type, received_at)
     SELECT $1::text, $1::text || '_' || i, 'invoice.paid', '\\x7b7d', 'application/json', now() - interval '1 hour' + i * interval '1 millisecond'
     FROM generate_series(1, $2::int) AS i`,
    [src, n],
  );
}

async function statusOf(t: TestDb, src: string, eventId: string): Promise<string | undefined> {
  const res = await t.db.query<{ status: string }>('SELECT status FROM inbox_deliveries WHERE source = $1 AND event_id = $2', [src, eventId]);
  return res.rows[0]?.status;
}

async function doneCount(t: TestDb, src: string): Promise<number> {
  const res = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_deliveries WHERE source = $1 AND status = 'done'", [src]);
  return res.rows[0]!.n;
}

/**
 * Fair processing across sources (docs/processing.md, "Fairness across sources"): a source's backlog
 * takes its turn in the claims, it does not take all of them; a forward target that answers slowly
 * holds its own source's slots, not the worker.
 */
describe('worker: no source holds back another', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a source with 5,000 due deliveries: another source's new delivery is processed within two claims", { timeout: 120_000 }, async () => {
    const config = parseConfig({
      worker: { batch_size: 100, concurrency: 1, lease: '1m', poll_interval: '1s' },
      sources: { flood: source(), quiet: source() },
    });
    const handled: string[] = [];
    const handlers = defineHandlers()
      .on('flood', '*', () => {
        handled.push('flood');
      })
      .on('quiet', '*', () => {
        handled.push('quiet');
      });
    const worker = createInboxWorker(testContext(t.db, config), { handlers });
    await backlog(t, 'flood', 5_000);
    // The quiet source's delivery arrives last: by time, it is behind the whole backlog.
    await t.db.query(
      "INSERT INTO inbox_deliveries (source, event_id, event_type, body, content_type) VALUES ('quiet', 'quiet_1', 'invoice.paid', '\\x7b7d', 'application/json')",
    );
    let claims = 0;
    while ((await statusOf(t, 'quiet', 'quiet_1')) !== 'done') {
      expect(await worker.runOnce()).toBeGreaterThan(0);
      claims++;
      expect(claims, 'claims before the quiet delivery was processed').toBeLessThanOrEqual(2);
    }
    // The backlog is still there: the quiet delivery did not wait for it to drain.
    expect(await doneCount(t, 'flood')).toBeLessThanOrEqual(2 * 100);
    expect(handled.filter((s) => s === 'quiet')).toHaveLength(1);
    await t.db.query("DELETE FROM inbox_deliveries WHERE source IN ('flood', 'quiet')");
  });

  it('two flooding sources share the claims in turn', { timeout: 120_000 }, async () => {
    const config = parseConfig({
      worker: { batch_size: 50, concurrency: 1, lease: '1m', poll_interval: '1s' },
      sources: { one: source(), two: source() },
    });
    const handlers = defineHandlers()
      .on('one', '*', () => {})
      .on('two', '*', () => {});
    const worker = createInboxWorker(testContext(t.db, config), { handlers });
    await backlog(t, 'one', 1_000);
    await backlog(t, 'two', 1_000);
    for (let i = 0; i < 4; i++) await worker.runOnce();
    // Four claims of 50 (fewer per claim on the embedded store, which paces its batches): half each.
    const [one, two] = [await doneCount(t, 'one'), await doneCount(t, 'two')];
    expect(one).toBeGreaterThan(0);
    expect(one).toBe(two);
    await t.db.query("DELETE FROM inbox_deliveries WHERE source IN ('one', 'two')");
  });

  // Forward batches run beside the claim loop on Postgres; the embedded store has one connection, and
  // runs every batch in its loop.
  it.skipIf(!onPostgres)(
    "a slow forward target holds its own source's slots: another source's forwards are done while it has not answered",
    { timeout: 120_000 },
    async () => {
      let release: () => void = () => {};
      const gate = new Promise<void>((r) => (release = r));
      let slowOpen = 0;
      let slowMaxOpen = 0;
      let slowSeen = 0;
      let slowAnswered = 0;
      const slow = createServer((req, res) => {
        slowSeen++;
        slowOpen++;
        slowMaxOpen = Math.max(slowMaxOpen, slowOpen);
        req.resume();
        // Answers only once the test opens the gate: a target that takes seconds, as long as the test needs.
        void gate.then(() => {
          slowOpen--;
          slowAnswered++;
          res.writeHead(204).end();
        });
      });
      const fast = createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      await Promise.all([listen(slow), listen(fast)]);
      const config = parseConfig({
        // One claim loop: before per-source slots, one batch waiting on the slow target held it, and
        // every other source's deliveries with it.
        worker: { batch_size: 100, concurrency: 1, lease: '2m', poll_interval: '50ms' },
        sources: {
          a: source({ forward: { url: urlOf(slow), timeout: '60s', secret: SECRET, max_in_flight: 4 } }),
          b: source({ forward: { url: urlOf(fast), timeout: '10s', secret: SECRET } }),
        },
      });
      const worker = createInboxWorker(testContext(t.db, config));
      await backlog(t, 'a', 20);
      await worker.start();
      try {
        await waitUntil(() => slowOpen >= 4, 30_000, "the slow target holding source a's four slots");
        await backlog(t, 'b', 30);
        await waitUntil(async () => (await doneCount(t, 'b')) === 30, 30_000, "source b's forwards done");
        // All of b went through while a's target had not answered once, and a never had more than its
        // four forwards open.
        expect(slowAnswered).toBe(0);
        expect(slowSeen).toBe(4);
        release();
        await waitUntil(async () => (await doneCount(t, 'a')) === 20, 60_000, "source a's forwards done once its target answers");
        expect(slowMaxOpen).toBe(4);
      } finally {
        release();
        await worker.stop();
        slow.closeAllConnections();
        fast.closeAllConnections();
        await Promise.all([new Promise((r) => slow.close(r)), new Promise((r) => fast.close(r))]);
      }
    },
  );
});
