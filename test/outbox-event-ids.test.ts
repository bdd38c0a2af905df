import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { listDeliveries } from '../src/outbox/history.js';
import { EVERY_TENANT } from '../src/scope.js';
import { deliveryEventId } from '../src/outbox/ids.js';
import { replayMessage } from '../src/outbox/operations.js';
import { publish } from '../src/outbox/publish.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { startSink, type Sink, type SinkRequest } from './helpers/sink.js';
import { waitUntil } from './helpers/wait.js';

function headerMap(req: SinkRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
}

/** The id a request carried, checked against its signature (standardwebhooks) and its body. */
function verifiedId(req: SinkRequest, secret: string): string {
  const body = new Webhook(secret).verify(req.body, headerMap(req)) as { event_id: string };
  expect(body.event_id).toBe(req.headers['webhook-id']);
  return body.event_id;
}

describe('outbox: event ids per message or per delivery (endpoint option event_id)', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let dispatcher: Dispatcher;
  const sinks: Record<'message' | 'deliveryA' | 'deliveryB', Sink> = {} as never;
  const endpoints: Record<string, { id: string; secret: string }> = {};

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db, { ladder: ['1s'], time_scale: 0.05 });
    sinks.message = await startSink();
    // The first request fails: the retry must carry the same id.
    sinks.deliveryA = await startSink((n) => ({ status: n === 1 ? 500 : 200 }));
    sinks.deliveryB = await startSink();
    const modes = { message: 'message', deliveryA: 'delivery', deliveryB: 'message' } as const;
    for (const name of ['message', 'deliveryA', 'deliveryB'] as const) {
      const { endpoint, secret } = await h.endpoints.create(t.db, { url: sinks[name].url, event_id: modes[name] });
      expect(endpoint.event_id).toBe(modes[name]);
      endpoints[name] = { id: endpoint.id, secret };
    }
    // Changed afterwards, as PATCH /api/v1/endpoints does.
    expect((await h.endpoints.update(t.db, endpoints.deliveryB!.id, { event_id: 'delivery' })).event_id).toBe('delivery');
    dispatcher = h.newDispatcher();
    await dispatcher.start();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all(Object.values(sinks).map((s) => s.close()));
    await t?.close();
  });

  it('gives each delivery-mode endpoint its own id, kept across a retry and a replay; message mode sends the message id', async () => {
    const { id: messageId } = await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', resourceId: 'inv_1', data: { amount: '10.00' } }));
    await sinks.message.waitFor(1, 20_000);
    await sinks.deliveryA.waitFor(2, 20_000); // the failed first attempt, then the retry
    await sinks.deliveryB.waitFor(1, 20_000);

    expect(verifiedId(sinks.message.requests[0]!, endpoints.message!.secret)).toBe(messageId);
    const [firstA, retryA] = sinks.deliveryA.requests.map((r) => verifiedId(r, endpoints.deliveryA!.secret));
    const idB = verifiedId(sinks.deliveryB.requests[0]!, endpoints.deliveryB!.secret);
    expect(firstA).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(retryA).toBe(firstA);
    expect(firstA).not.toBe(messageId);
    expect(idB).not.toBe(messageId);
    expect(idB).not.toBe(firstA);

    // The delivery list shows the id each endpoint saw.
    await waitUntil(async () => (await listDeliveries(t.db, EVERY_TENANT, { messageId })).items.every((d) => d.status === 'succeeded'), 15_000);
    const listed = (await listDeliveries(t.db, EVERY_TENANT, { messageId })).items;
    const byEndpoint = Object.fromEntries(listed.map((d) => [d.endpoint_id, d]));
    expect(byEndpoint[endpoints.message!.id]!.event_id).toBe(messageId);
    expect(byEndpoint[endpoints.deliveryA!.id]!.event_id).toBe(firstA);
    expect(byEndpoint[endpoints.deliveryB!.id]!.event_id).toBe(idB);
    expect(byEndpoint[endpoints.deliveryA!.id]!.event_id).toBe(deliveryEventId(messageId, byEndpoint[endpoints.deliveryA!.id]!.id));

    // A replay sends every delivery again, each with the id it had.
    expect((await replayMessage(t.db, messageId)).replayed).toBe(3);
    await sinks.message.waitFor(2, 20_000);
    await sinks.deliveryA.waitFor(3, 20_000);
    await sinks.deliveryB.waitFor(2, 20_000);
    expect(verifiedId(sinks.message.requests[1]!, endpoints.message!.secret)).toBe(messageId);
    expect(verifiedId(sinks.deliveryA.requests[2]!, endpoints.deliveryA!.secret)).toBe(firstA);
    expect(verifiedId(sinks.deliveryB.requests[1]!, endpoints.deliveryB!.secret)).toBe(idB);
  });

  it('gives another message other ids, and refuses an unknown mode', async () => {
    const { id: messageId } = await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { amount: '20.00' } }));
    await sinks.deliveryB.waitFor(3, 20_000);
    const id = verifiedId(sinks.deliveryB.requests[2]!, endpoints.deliveryB!.secret);
    expect(id).not.toBe(messageId);
    expect(sinks.deliveryB.requests.slice(0, 2).map((r) => r.headers['webhook-id'])).not.toContain(id);
    await expect(h.endpoints.create(t.db, { url: sinks.message.url, event_id: 'endpoint' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});
