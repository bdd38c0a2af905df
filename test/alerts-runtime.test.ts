import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverConfig, signPaymos } from './helpers/receiver.js';
import { waitUntil } from './helpers/wait.js';

describe('alerts in a running tekil: the receiver counts, the worker role evaluates', () => {
  let t: TestDb;
  let tekil: RunningTekil;

  beforeAll(async () => {
    t = await createTestDb();
    const env = { ...process.env, TEKIL_DATA_DIR: mkdtempSync(join(tmpdir(), 'tekil-alerts-runtime-')) };
    const config = receiverConfig({ alerts: { enabled: true, interval: '1s', formats: ['discord'], rules: { signature_failures: { failures: 2 } } } });
    tekil = await startTekil({ config, roles: ['receiver', 'worker'], env, db: t.db, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
  }, 180_000);
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
  });

  it('requests failing their signature over HTTP open a signature_failures incident, announced once', { timeout: 120_000 }, async () => {
    const body = paymosBody('evt_bad_secret');
    for (let i = 0; i < 2; i++) {
      const res = await request(`${tekil.url}/in/shop`, { method: 'POST', body, headers: signPaymos(body, { secret: 'whsec_not_ours' }) });
      expect(res.statusCode).toBe(401);
      await res.body.dump();
    }
    // Flushed within 5 s, evaluated every second.
    const open = async () =>
      (await t.db.query<{ id: string }>("SELECT id::text AS id FROM incidents WHERE rule = 'signature_failures' AND subject = 'shop' AND closed_at IS NULL"))
        .rows;
    // Generous: a loaded machine delays both, and the wait ends as soon as the incident is there.
    await waitUntil(async () => (await open()).length === 1, 60_000);
    const id = (await open())[0]!.id;
    // Two more rounds, counted as they finish: still one incident, one announcement of each kind.
    const evaluated = async () => {
      const metric = await tekil.ctx.metrics.getSingleMetric('tekil_alerts_rounds_total')?.get();
      return metric?.values.find((v) => v.labels.outcome === 'evaluated')?.value ?? 0;
    };
    const before = await evaluated();
    await waitUntil(async () => (await evaluated()) >= before + 2, 30_000);
    const { rows } = await t.db.query<{ event_type: string; payload: string }>(
      "SELECT event_type, convert_from(payload, 'UTF8') AS payload FROM outbox_messages WHERE resource_id = $1 ORDER BY event_type",
      [`incident_${id}`],
    );
    expect(rows.map((r) => r.event_type)).toEqual(['alert.discord', 'incident.opened']);
    expect(Object.keys(JSON.parse(rows[0]!.payload))).toEqual(['content']);
  });
});
