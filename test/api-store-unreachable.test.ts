import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { Db } from '../src/store/db.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { createTestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';

const TOKEN = 'store-unreachable-token';

/** A TCP server standing where Postgres should be: it accepts, then either says nothing or hangs up. */
async function fakePostgres(behaviour: 'silent' | 'hang-up'): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    // The client's startup message arrives; a dropped socket answers it.
    if (behaviour === 'hang-up') socket.once('data', () => socket.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `postgres://tekil@127.0.0.1:${port}/tekil`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** The store being unreachable is a 503 with Retry-After on every admin route, never a 500. */
describe('admin API: an unreachable store is 503 STORE_UNAVAILABLE', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  });
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  });

  async function appOn(db: Db) {
    const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-unreachable-')) } });
    const app = await buildApp({ ctx: testContext(db, config), roles: new Set(['api']), adminToken: TOKEN });
    cleanups.push(() => app.close());
    return app;
  }

  async function expectUnavailable(db: Db) {
    const app = await appOn(db);
    // At once: a pool that times out connecting takes its whole timeout for each request.
    const urls = ['/api/v1/endpoints', '/api/v1/messages', '/api/v1/inbox'];
    const answers = await Promise.all(urls.map((url) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TOKEN}` } })));
    for (const [i, res] of answers.entries()) {
      expect(res.statusCode, `${urls[i]}: ${res.body}`).toBe(503);
      expect((res.json() as { error: string }).error).toBe('STORE_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  }

  it('a Postgres that accepts and stays silent (the pool times out connecting)', async () => {
    const pg = await fakePostgres('silent');
    cleanups.push(() => pg.close());
    const db = createPostgresDb({ connectionString: pg.url, max: 3 });
    cleanups.push(() => db.close());
    await expectUnavailable(db);
  }, 30_000);

  it('a Postgres whose connections drop', async () => {
    const pg = await fakePostgres('hang-up');
    cleanups.push(() => pg.close());
    const db = createPostgresDb({ connectionString: pg.url, max: 3 });
    cleanups.push(() => db.close());
    await expectUnavailable(db);
  });

  it('a store that has been closed (this project’s store)', async () => {
    const t = await createTestDb();
    cleanups.push(() => t.close());
    await t.db.close();
    await expectUnavailable(t.db);
  });
});
