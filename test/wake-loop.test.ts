import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDb } from '../src/store/postgres.js';
import { WakeLoop } from '../src/store/wake-loop.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { startTcpProxy, throughProxy } from './helpers/tcp-proxy.js';
import { waitUntil } from './helpers/wait.js';

const CHANNEL = 'tekil_wake_loop_test';
/** A poll interval no test waits out: a round that comes sooner was woken. */
const NEVER = 600_000;

/** The wake loop under the worker, the dispatcher and the event stream, on the real store. */
describe('wake loop', () => {
  let t: TestDb;

  beforeAll(async () => {
    t = await createTestDb();
    await t.db.query('CREATE TABLE wake_loop_work (id int)');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('runs a round at start, then one per NOTIFY, without waiting for the poll', async () => {
    const payloads: string[] = [];
    let rounds = 0;
    const loop = new WakeLoop(t.db, { channel: CHANNEL, pollIntervalMs: NEVER, run: async () => (rounds++, false), onNotify: (p) => payloads.push(p) });
    await loop.start();
    try {
      await waitUntil(() => rounds === 1, 10_000, 'the first round');
      await t.db.query('SELECT pg_notify($1, $2)', [CHANNEL, 'hello']);
      await waitUntil(() => rounds === 2, 10_000, 'the round the NOTIFY asks for');
      expect(payloads).toEqual(['hello']);
      loop.wake();
      await waitUntil(() => rounds === 3, 10_000, 'the round wake() asks for');
    } finally {
      await loop.stop();
    }
  });

  it('finds work nothing notified by polling', async () => {
    let seen = 0;
    const loop = new WakeLoop(t.db, {
      channel: CHANNEL,
      pollIntervalMs: 100,
      run: async () => {
        seen = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM wake_loop_work')).rows[0]!.n;
        return false;
      },
    });
    await loop.start();
    try {
      // The row arrives with no NOTIFY, as when a notification is lost.
      await t.db.query('INSERT INTO wake_loop_work VALUES (1)');
      await waitUntil(() => seen === 1, 10_000, 'a poll to find the row');
    } finally {
      await loop.stop();
    }
  });

  it('runs again at once while a round says more is waiting, and backs off as told after a failure', async () => {
    const failuresSeen: number[] = [];
    let rounds = 0;
    const loop = new WakeLoop(t.db, {
      channel: CHANNEL,
      pollIntervalMs: NEVER,
      run: async () => {
        rounds++;
        if (rounds === 3 || rounds === 4) throw new Error(`round ${rounds} fails`);
        return rounds < 5;
      },
      onError: (_err, failures) => (failuresSeen.push(failures), 0),
    });
    await loop.start();
    try {
      await waitUntil(() => rounds === 5, 10_000, 'five rounds without a wake-up');
      expect(failuresSeen).toEqual([1, 2]);
    } finally {
      await loop.stop();
    }
    expect(rounds).toBe(5);
  });

  it('stops promptly while it sleeps, and waits for a round in progress to end', async () => {
    let rounds = 0;
    let release: () => void = () => {};
    const loop = new WakeLoop(t.db, {
      channel: CHANNEL,
      pollIntervalMs: NEVER,
      run: async () => {
        rounds++;
        if (rounds === 2) await new Promise<void>((r) => (release = r));
        return false;
      },
    });
    await loop.start();
    await waitUntil(() => rounds === 1, 10_000, 'the first round');
    const started = performance.now();
    await loop.stop();
    expect(performance.now() - started).toBeLessThan(1_000);

    // Started again, its first round hangs until released: stop() resolves only after it.
    await loop.start();
    await waitUntil(() => rounds === 2, 10_000, 'the round that hangs');
    expect(loop.busy).toBe(true);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await t.db.query('SELECT 1');
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(loop.busy).toBe(false);
    await t.db.query('SELECT pg_notify($1, $2)', [CHANNEL, 'after stop']);
    await t.db.query('SELECT 1');
    expect(rounds).toBe(2);
  });

  // PGlite's notifications are in-process: LISTEN cannot fail there.
  it.skipIf(!onPostgres)('keeps polling when LISTEN cannot be set up, and sets it up with backoff once the store answers', async () => {
    const proxy = await startTcpProxy({ host: new URL(t.url!).hostname, port: Number(new URL(t.url!).port || 5432) });
    const db = createPostgresDb({ connectionString: throughProxy(t.url!, proxy) });
    const failures: number[] = [];
    let rounds = 0;
    proxy.cut();
    const loop = new WakeLoop(db, {
      channel: CHANNEL,
      pollIntervalMs: NEVER,
      run: async () => (rounds++, false),
      onListenFailed: (_err, retryInMs) => failures.push(retryInMs),
    });
    try {
      await loop.start();
      await waitUntil(() => rounds === 1 && failures.length >= 2, 10_000, 'the first round and a failed retry');
      expect(failures[0]).toBeLessThanOrEqual(100);
      expect(failures[1]).toBeGreaterThanOrEqual(100); // doubled
      proxy.restore();
      // Set up at last, it looks at once for what it may have missed, then hears notifications.
      await waitUntil(() => rounds === 2, 20_000, 'the round after LISTEN is set up');
      await t.db.query('SELECT pg_notify($1, $2)', [CHANNEL, 'heard']);
      await waitUntil(() => rounds === 3, 10_000, 'the round the NOTIFY asks for');
    } finally {
      await loop.stop();
      await db.close();
      await proxy.close();
    }
  });
});
