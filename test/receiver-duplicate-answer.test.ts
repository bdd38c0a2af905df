import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createInboxBatcher } from '../src/receiver/batcher.js';
import type { Service } from '../src/service.js';
import { defineHandlers, PermanentError } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { drain } from './helpers/inbox.js';
import { paymosBody, receiverConfig, signPaymos, testContext } from './helpers/receiver.js';

/**
 * 001: "Aynı kimlik yeniden geldiğinde daha önceki sonucu döndürün". A copy of a delivery already
 * recorded is answered with the first copy's outcome (its status and the record its processing
 * produced), carried by the insert's own statement.
 */
describe("a duplicate's answer carries the first copy's outcome", () => {
  let t: TestDb;
  let app: FastifyInstance;
  let batcher: Service;
  const config = receiverConfig({ worker: { batch_size: 10, concurrency: 1, lease: '5s', poll_interval: '20ms' } });
  const handlers = defineHandlers()
    .on('shop', 'invoice.paid', (event) => ({ resultRef: `ord_${event.eventId}` }))
    .on('shop', 'invoice.refused', () => {
      throw new PermanentError('no such order');
    });

  beforeAll(async () => {
    t = await createTestDb();
    const ctx = testContext(t.db, config);
    const inbox = createInboxBatcher(ctx);
    await inbox.start();
    batcher = inbox;
    app = await buildApp({ ctx, roles: new Set(['receiver']), batcher: inbox });
  });
  afterAll(async () => {
    await app?.close();
    await batcher?.stop();
    await t?.close();
  });

  const post = async (body: string) => {
    const res = await app.inject({ method: 'POST', url: '/in/shop', payload: body, headers: signPaymos(body) });
    return { status: res.statusCode, json: res.json() as unknown };
  };
  const worker = () => createInboxWorker(testContext(t.db, config), { handlers });

  it('pending, then done with its result reference; a dead one says dead', async () => {
    const body = paymosBody('evt_dup_1');
    expect(await post(body)).toEqual({ status: 200, json: { status: 'accepted' } });
    // Recorded, not yet processed.
    expect(await post(body)).toEqual({ status: 200, json: { status: 'duplicate', previous: { status: 'pending', result_ref: null } } });

    await drain(worker(), t.db);
    expect(await post(body)).toEqual({ status: 200, json: { status: 'duplicate', previous: { status: 'done', result_ref: 'ord_evt_dup_1' } } });

    const refused = paymosBody('evt_dup_2', { event_type: 'invoice.refused' });
    expect(await post(refused)).toEqual({ status: 200, json: { status: 'accepted' } });
    await drain(worker(), t.db);
    expect(await post(refused)).toEqual({ status: 200, json: { status: 'duplicate', previous: { status: 'dead', result_ref: null } } });
  });

  it('copies inside one batch: one accepted, the others answered with the first as pending', async () => {
    const body = paymosBody('evt_dup_3');
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(body)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const accepted = answers.filter((a) => (a.json as { status: string }).status === 'accepted');
    expect(accepted).toHaveLength(1);
    for (const a of answers.filter((x) => (x.json as { status: string }).status === 'duplicate')) {
      expect(a.json).toEqual({ status: 'duplicate', previous: { status: 'pending', result_ref: null } });
    }
  });

  it('a provider with its own answer (PayTR: OK) gets it for a copy too, unchanged', async () => {
    const paytr = receiverConfig({
      sources: { paytr: { scheme: 'paytr', paytr: { merchant_key: 'k', merchant_salt: 's' } } },
    });
    const ctx = testContext(t.db, paytr);
    const inbox = createInboxBatcher(ctx);
    await inbox.start();
    const paytrApp = await buildApp({ ctx, roles: new Set(['receiver']), batcher: inbox });
    try {
      const { createScheme } = await import('../src/signing/index.js');
      const form = createScheme('paytr').signBody!({
        body: Buffer.from('merchant_oid=dup1&status=success&total_amount=100'),
        secrets: ['k'],
        namedSecrets: { salt: 's' },
      });
      const send = () => paytrApp.inject({ method: 'POST', url: '/in/paytr', payload: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect((await send()).body).toBe('OK');
      expect((await send()).body).toBe('OK');
    } finally {
      await paytrApp.close();
      await inbox.stop();
    }
  });
});
