import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DestinationGuard } from '../src/http/destination-guard.js';
import type { Dispatcher } from '../src/outbox/dispatcher.js';
import { publish } from '../src/outbox/publish.js';
import { Sender } from '../src/outbox/sender.js';
import { createForwarders } from '../src/worker/forward.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { outboxHarness } from './helpers/outbox.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

interface ConnectProxy {
  url(user: string, password: string): string;
  /** Tunnels opened (authorized CONNECTs), and every CONNECT target asked for. */
  tunnels: number;
  asked: string[];
  close(): Promise<void>;
}

/** A real HTTP CONNECT proxy on 127.0.0.1 that wants `Proxy-Authorization: Basic tekil:s3cret`. */
async function startConnectProxy(): Promise<ConnectProxy> {
  const expected = `Basic ${Buffer.from('tekil:s3cret').toString('base64')}`;
  const sockets = new Set<Socket>();
  const proxy: Omit<ConnectProxy, 'url' | 'close'> = { tunnels: 0, asked: [] };
  const server: Server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req, client: Socket, head: Buffer) => {
    sockets.add(client);
    proxy.asked.push(req.url ?? '');
    if (req.headers['proxy-authorization'] !== expected) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="egress"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host!, () => {
      proxy.tunnels++;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: (user: string, password: string) => `http://${user}:${password}@127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  });
}

/** `sending.proxy`: deliveries leave through an HTTP CONNECT proxy; the guard still judges the final destination. */
describe('outbox: sending through an egress proxy', () => {
  let proxy: ConnectProxy;
  let sink: Sink;
  beforeAll(async () => {
    proxy = await startConnectProxy();
    sink = await startSink(() => ({ status: 204 }));
  });
  afterAll(async () => {
    await proxy?.close();
    await sink?.close();
  });

  for (const [name, password, outcome] of [
    ['a delivery reaches the sink through the proxy, in a counted tunnel', 's3cret', 'succeeded'],
    ['a wrong proxy password fails the attempt with a clear error recorded', 'wrong', 'failed'],
  ] as const) {
    it(name, { timeout: 60_000 }, async () => {
      const t: TestDb = await createTestDb();
      let dispatcher: Dispatcher | undefined;
      try {
        const h = outboxHarness(t.db, { proxy: proxy.url('tekil', password), time_scale: 0.001 });
        dispatcher = h.newDispatcher();
        await dispatcher.start();
        await h.endpoints.create(t.db, { url: `${new URL(sink.url).origin}/via-proxy-${password}`, event_types: ['proxied.event'], ladder: ['1s'] });
        const before = { tunnels: proxy.tunnels, received: sink.requests.length };
        const { id } = await t.db.transaction((tx) => publish(tx, { type: 'proxied.event', data: { n: 1 } }));
        const attempts = async () =>
          (
            await t.db.query<{ succeeded: boolean; error: string | null }>(
              'SELECT succeeded, error FROM outbox_attempts WHERE message_id = $1 ORDER BY attempt',
              [id],
            )
          ).rows;
        await waitUntil(async () => (await attempts()).length > 0, 20_000, 'an attempt');
        const first = (await attempts())[0]!;
        if (outcome === 'succeeded') {
          expect(first).toEqual({ succeeded: true, error: null });
          expect(proxy.tunnels).toBe(before.tunnels + 1);
          expect(sink.requests.at(-1)!.path).toBe('/via-proxy-s3cret');
          expect(sink.requests.at(-1)!.headers['proxy-authorization']).toBeUndefined(); // the proxy's, never the endpoint's
        } else {
          expect(first.succeeded).toBe(false);
          expect(first.error).toBe('the proxy refused the tunnel: HTTP 407 (proxy authentication failed: check the user and password in sending.proxy)');
          expect(first.error).not.toContain('wrong');
          expect(proxy.tunnels).toBe(before.tunnels);
          expect(sink.requests).toHaveLength(before.received);
        }
      } finally {
        await dispatcher?.stop();
        await t.close();
      }
    });
  }

  it('a private final destination is refused before the proxy is asked, while allow-listing is off', async () => {
    // The proxy itself is on loopback, a private address: that is allowed (proxies usually are).
    const sender = new Sender({ operator: new DestinationGuard([]), tenants: new DestinationGuard([]) }, proxy.url('tekil', 's3cret'));
    try {
      const asked = proxy.asked.length;
      const port = new URL(sink.url).port;
      for (const url of [`${new URL(sink.url).origin}/literal`, `http://localhost:${port}/by-name`]) {
        const outcome = await sender.send({ url, body: Buffer.from('{}'), headers: {}, timeoutMs: 5_000 });
        expect(outcome).toMatchObject({ succeeded: false, statusCode: null });
        expect(outcome.error).toMatch(/^destination (127\.0\.0\.1|localhost) resolves to (127\.0\.0\.1|::1), a private, loopback or link-local address/);
      }
      expect(proxy.asked.length).toBe(asked); // no CONNECT was sent for either
      expect(sink.requests.some((r) => r.path === '/literal' || r.path === '/by-name')).toBe(false);
    } finally {
      await sender.close(true);
    }
  });

  it('forwarding goes through the proxy when its forward block says proxy: true', { timeout: 60_000 }, async () => {
    const t = await createTestDb();
    try {
      const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
      const forward = { url: `${new URL(sink.url).origin}/forwarded`, secret, proxy: true };
      const config = workerTestConfig({ sending: { proxy: proxy.url('tekil', 's3cret') } }, { forward, ordering: undefined });
      const worker = createInboxWorker(testContext(t.db, config));
      const tunnels = proxy.tunnels;
      await t.db.query(
        `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body) VALUES ($1, 'evt_px', 'inv_px', 'invoice.paid', '\\x7b7d')`,
        [SOURCE],
      );
      expect(await worker.runOnce()).toBe(1);
      expect(proxy.tunnels).toBe(tunnels + 1);
      expect(sink.requests.at(-1)!.path).toBe('/forwarded');
      const { rows } = await t.db.query<{ status: string }>(`SELECT status FROM inbox_deliveries WHERE event_id = 'evt_px'`);
      expect(rows[0]!.status).toBe('done');
      await worker.stop();
      // Without a proxy to forward through, the configuration is refused, naming the setting.
      expect(() => createForwarders(workerTestConfig({}, { forward }))).toThrow(/sources\.shop-paymos\.forward\.proxy: no sending\.proxy is configured/);
    } finally {
      await t.close();
    }
  });
});
