import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { brokerKinds } from '../src/destinations/broker-url.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';
import { waitUntil } from './helpers/sink.js';
import { BROKER_PORTS, brokerTarget, type BrokerTarget } from './helpers/brokers.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';

// time_scale 0.01: the ladder's 10s rungs are 100 ms apart.
const SCALE = 0.01;
const LADDER = Array.from({ length: 40 }, () => '10s');

interface AttemptRow {
  message_id: string;
  attempt: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  url: string;
}

describe('outbox: broker endpoints against the real brokers', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let dispatcher: Dispatcher;
  const targets: BrokerTarget[] = [];
  const proxies: TcpProxy[] = [];

  // One store and one dispatcher for the three kinds: each test has its own endpoint and broker target.
  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db, { time_scale: SCALE });
    dispatcher = h.newDispatcher();
    await dispatcher.start();
  }, 180_000);
  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all(proxies.map((p) => p.close()));
    await Promise.all(targets.map((x) => x.remove()));
    await t?.close();
  });

  describe.each(brokerKinds)('kind %s', (kind) => {
    async function target(): Promise<BrokerTarget> {
      const made = await brokerTarget(kind);
      targets.push(made);
      return made;
    }
    const send = (type: string, n: number) =>
      t.db.transaction(async (tx) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) ids.push((await publish(tx, { type, data: { n: i } })).id);
        return ids;
      });
    async function statuses(endpointId: string): Promise<Record<string, number>> {
      const { rows } = await t.db.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM outbox_deliveries WHERE endpoint_id = $1 GROUP BY status',
        [endpointId],
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    }
    async function attempts(endpointId: string): Promise<AttemptRow[]> {
      const { rows } = await t.db.query<AttemptRow>(
        'SELECT message_id, attempt, succeeded, status_code, error, response_body, url FROM outbox_attempts WHERE endpoint_id = $1 ORDER BY id',
        [endpointId],
      );
      return rows;
    }

    it('each delivery arrives once, carrying the message id and its signature; the attempt records what the broker said', async () => {
      const where = await target();
      const type = `broker.${kind}.once`;
      const { endpoint } = await h.endpoints.create(t.db, { url: where.url(), event_types: [type] });
      expect(endpoint.kind).toBe(kind);
      const ids = await send(type, 25);
      await waitUntil(async () => (await statuses(endpoint.id)).succeeded === 25, 20_000, 'every delivery to succeed');
      await waitUntil(async () => (await where.read()).length >= 25, 10_000, 'the broker to hold every message');
      const read = await where.read();
      expect(read.map((m) => m.id).sort()).toEqual([...ids].sort());
      for (const m of read) {
        expect(m.headers['webhook-id']).toBe(m.id);
        expect(m.headers['webhook-signature']).toMatch(/^v1,/);
        expect(JSON.parse(m.body).type).toBe(type);
      }
      const rows = await attempts(endpoint.id);
      expect(rows).toHaveLength(25);
      expect(rows.every((a) => a.succeeded && a.status_code === null && a.error === null)).toBe(true);
      const said = { rabbitmq: /^confirmed by the broker/, nats: /^stream tekil_test_\w+ seq \d+$/, redis: /^stream tekil_test_\w+ entry \d+-\d+$/ }[kind];
      for (const a of rows) expect(a.response_body).toMatch(said);
    });

    it('the broker unreachable mid-run: failed attempts on the ladder, then every message arrives, repeats with the same id', async () => {
      const where = await target();
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: BROKER_PORTS[kind] });
      proxies.push(proxy);
      const type = `broker.${kind}.outage`;
      // A rate limit spreads the 40 deliveries over two seconds, so the cut falls in the middle of the run.
      const { endpoint } = await h.endpoints.create(t.db, { url: where.url(proxy.port), event_types: [type], ladder: LADDER, rate_limit: '20/s' });
      const ids = await send(type, 40);
      await waitUntil(async () => ((await statuses(endpoint.id)).succeeded ?? 0) >= 5, 20_000, 'the first deliveries to succeed');
      proxy.cut();
      await waitUntil(async () => (await attempts(endpoint.id)).some((a) => !a.succeeded), 20_000, 'a failed attempt while the broker is unreachable');
      const during = await statuses(endpoint.id);
      expect(during.succeeded ?? 0).toBeLessThan(40);
      proxy.restore();
      await waitUntil(async () => (await statuses(endpoint.id)).succeeded === 40, 30_000, 'every delivery to succeed after the broker is back');
      await waitUntil(async () => new Set((await where.read()).map((m) => m.id)).size >= 40, 10_000, 'the broker to hold every message');
      const read = await where.read();
      // Nothing lost; anything there twice (a publish the broker took before the cut hid its answer) has the same id.
      expect(new Set(read.map((m) => m.id))).toEqual(new Set(ids));
      for (const m of read) expect(m.headers['webhook-id']).toBe(m.id);
      // JetStream deduplicates on Nats-Msg-Id: each message is in the stream exactly once.
      if (kind === 'nats') expect(read).toHaveLength(40);
      const rows = await attempts(endpoint.id);
      const failed = rows.filter((a) => !a.succeeded);
      expect(failed.length).toBeGreaterThan(0);
      for (const a of failed) expect(a.error).toMatch(new RegExp(`^${kind}: `));
      // The failed messages were retried until they succeeded.
      for (const id of new Set(failed.map((a) => a.message_id))) expect(rows.some((a) => a.message_id === id && a.succeeded)).toBe(true);
    });

    it('credentials in the URL are stored encrypted and never shown', async () => {
      const where = await target();
      const secretUrl = where.url().replace('127.0.0.1', 'tekil:s3cr3t-pw@127.0.0.1').replace('guest:guest@tekil:', 'tekil:');
      const type = `broker.${kind}.credentials`;
      const { endpoint } = await h.endpoints.create(t.db, { url: secretUrl, event_types: [type] });
      expect(endpoint.url).not.toContain('s3cr3t-pw');
      expect(endpoint.url).toContain('***');
      const { rows } = await t.db.query<Record<string, unknown>>('SELECT * FROM endpoints WHERE id = $1', [endpoint.id]);
      expect(JSON.stringify(rows[0])).not.toContain('s3cr3t-pw');
      expect(h.box.decrypt(rows[0]!.destination_enc as string)).toBe(secretUrl);
      // A form sending the shown URL back (with ***) leaves the stored one as it was.
      await h.endpoints.update(t.db, endpoint.id, { url: endpoint.url, description: 'edited in a form' });
      const after = await t.db.query<{ destination_enc: string }>('SELECT destination_enc FROM endpoints WHERE id = $1', [endpoint.id]);
      expect(h.box.decrypt(after.rows[0]!.destination_enc)).toBe(secretUrl);
      // The broker refuses the made-up user (Redis and NATS without users take it, or refuse AUTH):
      // whatever happens, neither the history nor the error names the password.
      await send(type, 1);
      await waitUntil(async () => (await attempts(endpoint.id)).length > 0, 20_000, 'an attempt');
      expect(JSON.stringify(await attempts(endpoint.id))).not.toContain('s3cr3t-pw');
    });
  });
});

describe('outbox: broker endpoints refused and checked where they are created', () => {
  let t: TestDb;
  let h: OutboxHarness;
  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db);
  }, 180_000);
  afterAll(async () => t?.close());

  it('refuses an unknown scheme, a kind its URL does not match, an unknown parameter, a redis URL without a stream and a refused network', async () => {
    const create = (body: Record<string, unknown>) => h.endpoints.create(t.db, body);
    await expect(create({ url: 'ftp://127.0.0.1/x' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(create({ kind: 'nats', url: 'redis://127.0.0.1:6379/0?stream=s' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(create({ url: 'amqp://127.0.0.1/?queue=x' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      message: expect.stringContaining('"queue"'),
    });
    await expect(create({ url: 'redis://127.0.0.1:6379/0' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(create({ url: 'nats://10.1.2.3:4222?subject=a' })).rejects.toMatchObject({ code: 'FORBIDDEN_DESTINATION' });
  });

  it('a RabbitMQ message no queue takes is returned, and the attempt fails instead of counting as delivered', async () => {
    const d = h.newDispatcher();
    await d.start();
    try {
      const type = 'broker.rabbitmq.unroutable';
      const { endpoint } = await h.endpoints.create(t.db, {
        url: 'amqp://guest:guest@127.0.0.1:5672/?routing_key=tekil_no_such_queue_x',
        event_types: [type],
        ladder: ['1h'],
      });
      await t.db.transaction((tx) => publish(tx, { type, data: {} }));
      await waitUntil(
        async () => (await t.db.query('SELECT 1 FROM outbox_attempts WHERE endpoint_id = $1', [endpoint.id])).rows.length > 0,
        20_000,
        'the attempt',
      );
      const { rows } = await t.db.query<{ succeeded: boolean; error: string }>('SELECT succeeded, error FROM outbox_attempts WHERE endpoint_id = $1', [
        endpoint.id,
      ]);
      expect(rows[0]).toMatchObject({ succeeded: false, error: expect.stringContaining('312 NO_ROUTE') });
    } finally {
      await d.stop();
    }
  });
});
