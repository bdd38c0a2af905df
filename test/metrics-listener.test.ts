import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, type TestDb } from './helpers/db.js';

const METRICS_TOKEN = 'scrape-token-of-the-operator';

async function get(url: string, authorization?: string): Promise<{ status: number; body: string }> {
  const res = await request(url, authorization ? { headers: { authorization } } : {});
  return { status: res.statusCode, body: await res.body.text() };
}

/**
 * /metrics where an operator wants it: on the public port by default, on a port of its own with
 * `server.metrics_port` (and then not on the public one), behind TEKIL_METRICS_TOKEN when set; Node's
 * process metrics carry the one `tekil_` prefix.
 */
describe('/metrics: its own port, its token, one prefix', () => {
  let t: TestDb;
  const running: RunningTekil[] = [];
  const start = async (server: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => {
    const tekil = await startTekil({
      config: parseConfig({ server }),
      roles: new Set(['receiver']),
      env: { TEKIL_SECRET_KEY: 'metrics listener key', ...env },
      port: 0,
      host: '127.0.0.1',
      db: t.db,
      logger: createLogger({ level: 'silent' }),
    });
    running.push(tekil);
    return tekil;
  };

  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    for (const r of running) await r.close();
    await t?.close();
  });

  it('by default on the main port, with process metrics named tekil_process_* and tekil_nodejs_* (no double prefix)', async () => {
    const tekil = await start({});
    expect(tekil.metricsUrl).toBeUndefined();
    const { status, body } = await get(`${tekil.url}/metrics`);
    expect(status).toBe(200);
    expect(body).toMatch(/^tekil_process_cpu_user_seconds_total /m);
    expect(body).toMatch(/^tekil_nodejs_eventloop_lag_seconds /m);
    expect(body).not.toContain('tekil_process_process_');
    expect(body).not.toContain('tekil_process_nodejs_');
  });

  it('with server.metrics_port: served there only; the public port answers 404', async () => {
    const tekil = await start({ metrics_port: 0 });
    expect(tekil.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(tekil.metricsUrl).not.toBe(tekil.url);
    const own = await get(`${tekil.metricsUrl}/metrics`);
    expect(own.status).toBe(200);
    expect(own.body).toMatch(/^tekil_process_cpu_user_seconds_total /m);
    const publicPort = await get(`${tekil.url}/metrics`);
    expect(publicPort.status).toBe(404);
    expect(JSON.parse(publicPort.body)).toMatchObject({ error: 'NOT_FOUND' });
    // The metrics port serves nothing else.
    expect((await get(`${tekil.metricsUrl}/healthz`)).status).toBe(404);
  });

  it('with TEKIL_METRICS_TOKEN: a scrape without it, or with another, is 401; with it, 200 (on either port)', async () => {
    for (const server of [{}, { metrics_port: 0 }]) {
      const tekil = await start(server, { TEKIL_METRICS_TOKEN: METRICS_TOKEN });
      const url = `${tekil.metricsUrl ?? tekil.url}/metrics`;
      const none = await get(url);
      expect(none.status).toBe(401);
      expect(JSON.parse(none.body)).toMatchObject({ error: 'UNAUTHORIZED' });
      expect((await get(url, 'Bearer not-the-token')).status).toBe(401);
      expect((await get(url, METRICS_TOKEN)).status).toBe(401);
      const ok = await get(url, `Bearer ${METRICS_TOKEN}`);
      expect(ok.status).toBe(200);
      expect(ok.body).toMatch(/^tekil_process_cpu_user_seconds_total /m);
    }
  });
});
