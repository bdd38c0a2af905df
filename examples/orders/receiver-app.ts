// A small webhook receiver written the way a merchant's application would be (no tekil inside):
// verify the signature, deduplicate on the event id atomically with the work, keep invoice states
// in order. It exposes the prove contracts: GET /_prove/effects, POST /_prove/fail-next,
// POST /_prove/slow-next?ms=N and the optional POST /_prove/kill-next. tekil forwards to it in the tests, and the test suite's broken
// receivers are this app with one seam replaced each.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createScheme, type HmacSchemeOptions, type IncomingHeaders, type SchemeName } from '../../src/signing/index.js';

/** An invoice event as this app reads it, whatever the envelope (Paymos, Stripe, Standard…). */
export interface ReceivedEvent {
  eventId: string;
  invoiceId: string;
  status: string;
}

export interface ReceiverAppOptions {
  scheme: SchemeName;
  secrets: readonly string[];
  /** For the `hmac` scheme: its options, as in a source's `hmac:`. */
  hmac?: HmacSchemeOptions;
  /** Paths that take webhooks: the main URL and the callback URL share one deduplication. */
  paths?: readonly string[];
  /** Seconds either side of now a signed timestamp may be; default 300. */
  toleranceSec?: number;
  /** Throws when the request must be refused with 401; default: the scheme's verifier. */
  verify?: (body: Buffer, headers: IncomingHeaders) => void;
  /** What deduplicates: the event id by default; `undefined` means no deduplication. */
  dedupeKey?: (e: ReceivedEvent) => string | undefined;
  /** Record the key before the work instead of with it (only the broken receivers do this). */
  recordKeyBeforeWork?: boolean;
  /** Apply every event's state as it arrives, even backwards (only the broken receivers do this). */
  applyInArrivalOrder?: boolean;
  /** Credit every invoice.paid, even for an invoice already paid (only the broken receivers do this). */
  creditEveryPaid?: boolean;
  /** A killed worker's effect stays without its processed mark (only the broken receivers do this). */
  killedWorkKept?: boolean;
  host?: string;
}

export interface ReceiverApp {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Later states never move an invoice back (a late `confirming` after `paid` is ignored). */
const terminal = new Set(['paid', 'paid_over', 'underpaid', 'expired']);

/** The worker died mid-job: nothing answers the request, nothing it had not committed is kept. */
class WorkerKilled extends Error {}

interface Invoice {
  count: number;
  state: string;
}

const header = (h: IncomingHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

function readEvent(body: Buffer, headers: IncomingHeaders): ReceivedEvent | undefined {
  const doc = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  // The invoice is under data.object (Stripe), under data (Paymos, Standard, GitHub, HMAC), or the
  // body itself (Shopify, whose topic and delivery id travel in headers).
  const data = doc.data as Record<string, unknown> | undefined;
  const invoice = (data === undefined ? doc : (data.object ?? data)) as Record<string, unknown>;
  const eventId =
    doc.event_id ??
    (data !== undefined ? doc.id : undefined) ??
    header(headers, 'webhook-id') ??
    header(headers, 'x-event-id') ??
    header(headers, 'x-shopify-webhook-id') ??
    header(headers, 'x-github-delivery');
  const invoiceId = invoice.invoice_id ?? invoice.id;
  const status = invoice.status;
  if (typeof eventId !== 'string' || typeof invoiceId !== 'string' || typeof status !== 'string') return undefined;
  return { eventId, invoiceId, status };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startReceiverApp(options: ReceiverAppOptions): Promise<ReceiverApp> {
  const paths = new Set(options.paths ?? ['/webhooks', '/callback']);
  const scheme = createScheme(options.scheme, options.hmac);
  const verify =
    options.verify ??
    ((body: Buffer, headers: IncomingHeaders) => void scheme.verify({ body, headers, secrets: options.secrets, toleranceSec: options.toleranceSec ?? 300 }));
  const dedupeKey = options.dedupeKey ?? ((e: ReceivedEvent) => e.eventId);
  const invoices = new Map<string, Invoice>();
  const processed = new Set<string>();
  /** One run per key at a time: what a unique key inside a transaction gives a database-backed app. */
  const running = new Map<string, Promise<unknown>>();
  let failNext = false;
  let killNext = false;
  let slowNextMs = 0;

  async function run(e: ReceivedEvent): Promise<number> {
    const key = dedupeKey(e);
    if (key !== undefined && processed.has(key)) return 200;
    if (key !== undefined && options.recordKeyBeforeWork) processed.add(key);
    const slowMs = slowNextMs;
    slowNextMs = 0;
    const fail = failNext;
    failNext = false;
    const kill = killNext;
    killNext = false;
    // The work: it takes time, and may fail half-way; nothing below is kept unless it completes.
    if (slowMs) await new Promise((r) => setTimeout(r, slowMs));
    if (fail) return 500;
    if (kill) {
      // The worker dies before the commit. A broken app wrote the effect on its own first (an
      // autocommitted write, a call to another service), without the processed mark.
      if (options.killedWorkKept && e.status === 'paid') {
        const invoice = invoices.get(e.invoiceId) ?? { count: 0, state: 'awaiting_payment' };
        invoice.count++;
        invoices.set(e.invoiceId, invoice);
      }
      throw new WorkerKilled('kill-next: the worker died mid-job');
    }
    // The commit: the effect, the state and the processed key together.
    const invoice = invoices.get(e.invoiceId) ?? { count: 0, state: 'awaiting_payment' };
    // The second lock, behind the event id: "mark paid only if not yet paid", so invoice.paid under a
    // new event id for a paid invoice credits nothing.
    const credits = e.status === 'paid' && (options.creditEveryPaid || invoice.state !== 'paid');
    if (options.applyInArrivalOrder || !terminal.has(invoice.state)) invoice.state = e.status;
    if (credits) invoice.count++;
    invoices.set(e.invoiceId, invoice);
    if (key !== undefined) processed.add(key);
    return 200;
  }

  async function serialised(e: ReceivedEvent): Promise<number> {
    const key = dedupeKey(e);
    if (key === undefined) return run(e);
    const before = running.get(key) ?? Promise.resolve();
    const mine = before.then(() => run(e));
    const tail = mine.catch(() => undefined);
    running.set(key, tail);
    try {
      return await mine;
    } finally {
      if (running.get(key) === tail) running.delete(key);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/_prove/effects') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(Object.fromEntries(invoices)));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/_prove/fail-next') {
      failNext = true;
      res.statusCode = 204;
      res.end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/_prove/kill-next') {
      killNext = true;
      res.statusCode = 204;
      res.end();
      return;
    }
    if (req.method === 'POST' && url.pathname === '/_prove/slow-next') {
      slowNextMs = Number(url.searchParams.get('ms') ?? 0) || 0;
      res.statusCode = 204;
      res.end();
      return;
    }
    if (req.method !== 'POST' || !paths.has(url.pathname)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const body = await readBody(req);
    try {
      verify(body, req.headers);
    } catch {
      res.statusCode = 401;
      res.end();
      return;
    }
    let event: ReceivedEvent | undefined;
    try {
      event = readEvent(body, req.headers);
    } catch {
      event = undefined;
    }
    if (!event) {
      res.statusCode = 400;
      res.end();
      return;
    }
    res.statusCode = await serialised(event);
    res.end();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A killed worker answers nothing: the connection drops, as when its process dies; the next
      // request finds the worker restarted.
      if (err instanceof WorkerKilled) {
        req.socket.destroy();
        return;
      }
      res.statusCode = 500;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
