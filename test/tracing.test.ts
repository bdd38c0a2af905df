import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { PAYMOS_SECRET, signPaymos } from './helpers/receiver.js';
import { startSink, type Sink } from './helpers/sink.js';
import { repoRoot, spawnTekil, type TekilProcess } from './helpers/tekil-process.js';
import { waitFor } from './helpers/wait.js';

/** One span as an OTLP/HTTP JSON export carries it, with the pid its process's resource names. */
interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, string | number | boolean>;
  service: string;
  pid: number;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function decodeValue(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue ?? '';
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, decodeValue(kv.value)]));
}

/**
 * An OTLP/HTTP collector: takes POST /v1/traces in the JSON encoding (what tekil's exporter sends),
 * decodes every resource's spans and keeps them.
 */
async function startCollector(): Promise<{ url: string; spans: ReceivedSpan[]; contentTypes: Set<string>; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{
          resource: { attributes: KeyValue[] };
          scopeSpans: Array<{ spans: Array<{ name: string; traceId: string; spanId: string; parentSpanId?: string; attributes?: KeyValue[] }> }>;
        }>;
      };
      for (const rs of doc.resourceSpans) {
        const resource = attributesOf(rs.resource.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              attributes: attributesOf(s.attributes),
              service: String(resource['service.name']),
              pid: Number(resource['process.pid']),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const ADMIN_TOKEN = 'tracing-test-admin-token-0123456789';
const FORWARD_SECRET = 'whsec_dHJhY2luZy10ZXN0LWZvcndhcmQtc2VjcmV0';

// On Postgres the receiver, the worker and the dispatcher are separate processes; PGlite is one
// process's store, so there one process runs every role (the spans still cross from the HTTP request
// to the claim loop through the stored traceparent).
describe(onPostgres ? 'tracing across a receiver process, a worker process and a dispatcher process' : 'tracing in one embedded process', () => {
  let t: TestDb;
  let dir: string;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let app: Server;
  const forwarded: IncomingHttpHeaders[] = [];
  let sink: Sink;
  const processes: TekilProcess[] = [];
  let receiverUrl: string;
  let apiUrl: string;

  beforeAll(async () => {
    t = await createTestDb();
    collector = await startCollector();
    sink = await startSink();
    // The application the worker forwards to: records the headers it got.
    app = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        forwarded.push(req.headers);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    const appPort = (app.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'tekil-tracing-'));
    writeFileSync(
      join(dir, 'tekil.yaml'),
      `
sources:
  shop:
    scheme: paymos
    secrets: ["${PAYMOS_SECRET}"]
    event_id: body:event_id
    event_type: body:event_type
    forward: { url: "http://127.0.0.1:${appPort}/hooks", secret: "${FORWARD_SECRET}", allow_networks: ["127.0.0.0/8"] }
  local:
    scheme: paymos
    secrets: ["${PAYMOS_SECRET}"]
    event_id: body:event_id
    event_type: body:event_type
worker: { poll_interval: 200ms }
sending:
  allow_networks: ["127.0.0.0/8"]
  dispatcher: { poll_interval: 100ms }
telemetry: { service_name: tekil-under-test }
`,
    );
    // An application's handler: its own span (with @opentelemetry/api, as an application traces), and a
    // message published in the delivery's transaction, whose sending ends the webhook's trace.
    const handlersFile = join(dir, 'handlers.mts');
    writeFileSync(
      handlersFile,
      `import { trace } from '${repoRoot}node_modules/@opentelemetry/api/build/esm/index.js';
import { defineHandlers } from '${repoRoot}src/worker/handlers.js';
import { publish } from '${repoRoot}src/outbox/publish.js';
export default defineHandlers().on('local', '*', async (event, ctx) => {
  trace.getTracer('app').startActiveSpan('app.effect', (span) => span.end());
  await publish(ctx.tx, { type: 'invoice.effect', data: { event_id: event.eventId } });
});
`,
    );
    const handlers = ['--handlers', handlersFile];
    // The endpoint comes from the environment: the file names none, as an operator's may not.
    const env = {
      ...(t.url ? { DATABASE_URL: t.url } : {}),
      TEKIL_DATA_DIR: join(dir, 'data'),
      TEKIL_SECRET_KEY: 'test secret key',
      TEKIL_ADMIN_TOKEN: ADMIN_TOKEN,
      TEKIL_OTLP_ENDPOINT: collector.url,
    };
    const start = (roles: string, extra: string[] = []) => spawnTekil(['-c', join(dir, 'tekil.yaml'), '-p', '0', '--role', roles, ...extra], env);
    if (onPostgres) {
      processes.push(...(await Promise.all([start('receiver', ['--processes', '1']), start('worker', handlers), start('dispatcher,api')])));
      receiverUrl = processes[0]!.url;
      apiUrl = processes[2]!.url;
    } else {
      processes.push(await start('all', ['--processes', '1', ...handlers]));
      receiverUrl = apiUrl = processes[0]!.url;
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await new Promise((r) => app?.close(r));
    await sink?.close();
    await collector?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const spanNamed = (name: string, where: (s: ReceivedSpan) => boolean) => () => collector.spans.find((s) => s.name === name && where(s));

  it('one forwarded webhook is one trace: receive, verify and store, then claim, process, forward and complete', async () => {
    const body = JSON.stringify({ event_id: 'evt_traced_1', event_type: 'invoice.paid', data: { invoice_id: 'inv_1' } });
    const res = await request(`${receiverUrl}/in/shop`, { method: 'POST', body, headers: signPaymos(body) });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ status: 'accepted' });

    const receive = await waitFor(
      spanNamed('tekil.receive', (s) => s.attributes['tekil.event_id'] === 'evt_traced_1'),
      30_000,
      'the receive span',
    );
    const trace = receive.traceId;
    expect(receive.parentSpanId).toBe('');
    expect(receive.attributes).toMatchObject({ 'tekil.source': 'shop', 'tekil.outcome': 'accepted' });
    expect(receive.service).toBe('tekil-under-test');
    const inTrace = (name: string) =>
      waitFor(
        spanNamed(name, (s) => s.traceId === trace),
        30_000,
        `${name} in the webhook's trace`,
      );
    const [verify, store, processing, claim, forward, complete] = await Promise.all(
      ['tekil.verify', 'tekil.store', 'tekil.process', 'tekil.claim', 'tekil.forward', 'tekil.complete'].map(inTrace),
    );
    expect(verify!.parentSpanId).toBe(receive.spanId);
    expect(store!.parentSpanId).toBe(receive.spanId);
    // The worker's spans hang under the receive span whose traceparent was stored with the delivery.
    expect(processing!.parentSpanId).toBe(receive.spanId);
    expect(processing!.attributes).toMatchObject({ 'tekil.event_id': 'evt_traced_1', 'tekil.outcome': 'done', 'tekil.attempt': 1 });
    for (const child of [claim!, forward!, complete!]) expect(child.parentSpanId).toBe(processing!.spanId);
    expect(complete!.attributes['tekil.outcome']).toBe('done');
    // Receiving and processing happened in different processes (on Postgres).
    for (const s of [verify!, store!]) expect(s.pid).toBe(receive.pid);
    for (const s of [claim!, forward!, complete!]) expect(s.pid).toBe(processing!.pid);
    if (onPostgres) expect(processing!.pid).not.toBe(receive.pid);

    // The application got the forward span's traceparent: its own spans join the same trace.
    const seen = forwarded.find((h) => h['x-tekil-event-id'] === 'evt_traced_1');
    expect(seen?.traceparent).toBe(`00-${trace}-${forward!.spanId}-01`);
    expect(collector.contentTypes.has('application/json')).toBe(true);
  }, 90_000);

  it("a provider's traceparent is the receive span's parent", async () => {
    const providerTrace = 'ab'.repeat(16);
    const providerSpan = 'cd'.repeat(8);
    const body = JSON.stringify({ event_id: 'evt_traced_2', event_type: 'invoice.paid', data: {} });
    const res = await request(`${receiverUrl}/in/shop`, {
      method: 'POST',
      body,
      headers: { ...signPaymos(body), traceparent: `00-${providerTrace}-${providerSpan}-01` },
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    const receive = await waitFor(
      spanNamed('tekil.receive', (s) => s.attributes['tekil.event_id'] === 'evt_traced_2'),
      30_000,
      'the receive span',
    );
    expect(receive.traceId).toBe(providerTrace);
    expect(receive.parentSpanId).toBe(providerSpan);
    const forward = await waitFor(
      spanNamed('tekil.forward', (s) => s.traceId === providerTrace),
      30_000,
      'the forward span',
    );
    expect(forwarded.find((h) => h['x-tekil-event-id'] === 'evt_traced_2')?.traceparent).toBe(`00-${providerTrace}-${forward.spanId}-01`);
  }, 60_000);

  it('a published message: the dispatch attempt is a child of the publish span and sends its traceparent', async () => {
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const created = await request(`${apiUrl}/api/v1/endpoints`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: sink.url, event_types: ['order.traced'] }),
    });
    expect(created.statusCode).toBe(201);
    await created.body.dump();
    const published = await request(`${apiUrl}/api/v1/messages`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ type: 'order.traced', data: { n: 1 } }),
    });
    expect(published.statusCode).toBe(202);
    const { id } = (await published.body.json()) as { id: string };

    const publish = await waitFor(
      spanNamed('tekil.publish', (s) => s.attributes['tekil.message_id'] === id),
      30_000,
      'the publish span',
    );
    const dispatch = await waitFor(
      spanNamed('tekil.dispatch', (s) => s.attributes['tekil.message_id'] === id),
      30_000,
      'the dispatch span',
    );
    expect(publish.attributes).toMatchObject({ 'tekil.event_type': 'order.traced', 'tekil.deliveries': 1 });
    expect(dispatch.traceId).toBe(publish.traceId);
    expect(dispatch.parentSpanId).toBe(publish.spanId);
    expect(dispatch.attributes).toMatchObject({ 'tekil.attempt': 1, 'http.response.status_code': 200 });
    const sent = sink.requests.find((r) => r.headers['webhook-id'] === id);
    expect(sent?.headers.traceparent).toBe(`00-${publish.traceId}-${dispatch.spanId}-01`);
  }, 60_000);

  it("a handled webhook's trace runs on through the handler's own span and its published message to the endpoint", async () => {
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const created = await request(`${apiUrl}/api/v1/endpoints`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: sink.url, event_types: ['invoice.effect'] }),
    });
    expect(created.statusCode).toBe(201);
    await created.body.dump();
    const body = JSON.stringify({ event_id: 'evt_traced_3', event_type: 'invoice.paid', data: {} });
    const res = await request(`${receiverUrl}/in/local`, { method: 'POST', body, headers: signPaymos(body) });
    expect(res.statusCode).toBe(200);
    await res.body.dump();

    const receive = await waitFor(
      spanNamed('tekil.receive', (s) => s.attributes['tekil.event_id'] === 'evt_traced_3'),
      30_000,
      'the receive span',
    );
    const inTrace = (name: string) =>
      waitFor(
        spanNamed(name, (s) => s.traceId === receive.traceId),
        30_000,
        `${name} in the webhook's trace`,
      );
    const [processing, handler, effect, publish, dispatch] = await Promise.all(
      ['tekil.process', 'tekil.handler', 'app.effect', 'tekil.publish', 'tekil.dispatch'].map(inTrace),
    );
    expect(processing!.parentSpanId).toBe(receive.spanId);
    expect(handler!.parentSpanId).toBe(processing!.spanId);
    // The handler ran with tekil's span current: the application's span and its publishing are its children.
    expect(effect!.parentSpanId).toBe(handler!.spanId);
    expect(publish!.parentSpanId).toBe(handler!.spanId);
    expect(dispatch!.parentSpanId).toBe(publish!.spanId);
    if (onPostgres) expect(new Set([receive.pid, processing!.pid, dispatch!.pid]).size).toBe(3);
    const sent = sink.requests.find((r) => r.headers['webhook-id'] === publish!.attributes['tekil.message_id']);
    expect(sent?.headers.traceparent).toBe(`00-${receive.traceId}-${dispatch!.spanId}-01`);
  }, 60_000);
});
