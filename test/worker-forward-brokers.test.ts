import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerKinds, type BrokerKind } from '../src/destinations/broker-url.js';
import { createInboxWorker, type InboxWorker } from '../src/worker/worker.js';
import { BROKER_PORTS, brokerTarget, type BrokerTarget } from './helpers/brokers.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { deliveryRow, testContext, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/sink.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/**
 * The receiving side's forward to the application's own broker: a verified, deduplicated webhook
 * published to RabbitMQ, NATS JetStream or Redis, through a TCP proxy the test cuts.
 */
describe('worker: forwarding to a broker', () => {
  let t: TestDb;
  let worker: InboxWorker;
  const targets = new Map<BrokerKind, BrokerTarget>();
  const proxies = new Map<BrokerKind, TcpProxy>();
  const source = (kind: BrokerKind) => `fwd-${kind}`;

  beforeAll(async () => {
    t = await createTestDb();
    const config = workerTestConfig({}, {});
    for (const kind of brokerKinds) {
      const target = await brokerTarget(kind);
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: BROKER_PORTS[kind] });
      targets.set(kind, target);
      proxies.set(kind, proxy);
      config.sources[source(kind)] = {
        ...config.sources['shop-paymos']!,
        ordering: undefined,
        retry: { max_attempts: 5, base: 60_000, cap: 60_000 },
        forward: { url: target.url(proxy.port), timeout: 10_000, secret: SECRET, max_in_flight: 64 },
      };
    }
    worker = createInboxWorker(testContext(t.db, config));
  }, 180_000);
  afterAll(async () => {
    await worker?.stop();
    await Promise.all([...proxies.values()].map((p) => p.close()));
    await Promise.all([...targets.values()].map((x) => x.remove()));
    await t?.close();
  });

  const insert = (kind: BrokerKind, eventId: string) =>
    t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, content_type) VALUES ($1, $2, 'inv_1', 'invoice.paid', $3, 'application/json')`,
      [source(kind), eventId, Buffer.from(`{"event_id":"${eventId}"}`)],
    );

  it.each(brokerKinds)(
    '%s: published with <source>:<event id> as its id and a signature any Standard Webhooks library verifies; the broker cut → retried, nothing lost',
    async (kind) => {
      const target = targets.get(kind)!;
      const proxy = proxies.get(kind)!;
      const src = source(kind);
      await insert(kind, 'evt_b1');
      // On a loaded machine a first connection may miss its deadline: the retry is made due at once.
      const forwarded = (eventId: string) =>
        waitUntil(
          async () => {
            await t.db.query('UPDATE inbox_queue SET next_attempt_at = now() WHERE event_id = $1', [eventId]);
            await worker.runOnce();
            return (await deliveryRow(t.db, eventId, src))?.status === 'done';
          },
          60_000,
          `the forward of ${eventId}`,
        );
      await forwarded('evt_b1');
      const first = await deliveryRow(t.db, 'evt_b1', src);
      expect(first?.result_ref).toMatch(kind === 'rabbitmq' ? /^confirmed/ : /^stream /);
      await waitUntil(async () => (await target.read()).length === 1, 10_000, 'the message at the broker');
      const [message] = await target.read();
      expect(message!.id).toBe(`${src}:evt_b1`);
      expect(message!.headers['x-tekil-event-id']).toBe('evt_b1');
      // The application verifies the message as it would an HTTP request, with the official library.
      const signed = {
        'webhook-id': message!.headers['webhook-id']!,
        'webhook-timestamp': message!.headers['webhook-timestamp']!,
        'webhook-signature': message!.headers['webhook-signature']!,
      };
      expect(() => new Webhook(SECRET).verify(message!.body, signed)).not.toThrow();

      // The broker unreachable: the forward fails and stays pending, its error recorded.
      proxy.cut();
      await insert(kind, 'evt_b2');
      await worker.runOnce();
      const failed = await deliveryRow(t.db, 'evt_b2', src);
      expect(failed?.status).toBe('pending');
      expect(failed?.last_error).toMatch(new RegExp(`^forward: ${kind}: `));
      // Back: the retry (made due now) publishes it, with the same id.
      proxy.restore();
      await forwarded('evt_b2');
      const ids = (await target.read()).map((m) => m.id);
      expect(new Set(ids)).toEqual(new Set([`${src}:evt_b1`, `${src}:evt_b2`]));
      if (kind === 'nats') expect(ids).toHaveLength(2);
    },
  );
});
