import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { startTcpProxy, throughProxy, type TcpProxy } from './helpers/tcp-proxy.js';
import { countRows, paymosBody, receiverApp, signPaymos } from './helpers/receiver.js';
import { createPostgresDb } from '../src/store/postgres.js';
import type { Db } from '../src/store/db.js';

// A real Postgres behind a proxy the test cuts: needs a server, so not on PGlite.
describe.skipIf(!onPostgres)('store outage', () => {
  let t: TestDb;
  let proxy: TcpProxy;
  let db: Db;
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    t = await createTestDb();
    const direct = new URL(t.url!);
    proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    db = createPostgresDb({ connectionString: throughProxy(t.url!, proxy), max: 4 });
    ({ app } = await receiverApp(db));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await proxy?.close();
    await t?.close();
  });

  async function send(id: string): Promise<{ status: number; retryAfter?: string; outcome?: string }> {
    const body = paymosBody(id);
    const res = await request(`${url}/in/shop`, { method: 'POST', body, headers: signPaymos(body) });
    const json = (await res.body.json()) as { status?: string };
    const retryAfter = res.headers['retry-after'];
    return { status: res.statusCode, ...(typeof retryAfter === 'string' ? { retryAfter } : {}), ...(json.status ? { outcome: json.status } : {}) };
  }

  it("answers 503 while the store is cut, never 2xx, and accepts the provider's retry after it returns", async () => {
    const answers = new Map<string, { status: number; afterCut: boolean }>();
    let cut = false;
    let next = 0;
    const total = 300;
    // 16 concurrent senders; the proxy is cut after 100 answers and restored after 200.
    const sender = async () => {
      while (next < total) {
        const id = `evt_out_${next++}`;
        const startedAfterCut = cut;
        const a = await send(id);
        answers.set(id, { status: a.status, afterCut: startedAfterCut });
        if (a.status === 503) expect(a.retryAfter).toBe('5');
        if (answers.size === 100 && !cut) {
          cut = true;
          proxy.cut();
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, sender));
    // Every request sent after the cut was refused: nothing could be committed.
    const duringCut = [...answers.values()].filter((a) => a.afterCut);
    expect(duringCut.length).toBeGreaterThan(100);
    expect(duringCut.every((a) => a.status === 503)).toBe(true);

    // Readiness reports the outage too.
    expect((await request(`${url}/readyz`)).statusCode).toBe(503);

    // Every 2xx is a committed row (checked on a direct connection, not through the proxy).
    const acked = [...answers].filter(([, a]) => a.status === 200).map(([id]) => id);
    expect(acked.length).toBeGreaterThanOrEqual(100);
    expect(await countRows(t.db, 'event_id = ANY($1)', [acked])).toBe(acked.length);

    proxy.restore();
    const refused = [...answers].filter(([, a]) => a.status !== 200).map(([id]) => id);
    expect(refused.every((id) => answers.get(id)!.status === 503)).toBe(true);
    // The provider retries each refused delivery: accepted now (or duplicate, had its commit landed
    // just before the connection dropped).
    // (16 at a time, as before the cut: one address holds at most a tenth of server.max_connections.)
    const retried: Awaited<ReturnType<typeof send>>[] = [];
    const queue = [...refused];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) retried.push(await send(id));
      }),
    );
    expect(retried.every((r) => r.status === 200)).toBe(true);
    expect(retried.filter((r) => r.outcome === 'accepted').length).toBeGreaterThan(150);
    expect(await countRows(t.db)).toBe(total);
    expect((await request(`${url}/readyz`)).statusCode).toBe(200);
  });
});
