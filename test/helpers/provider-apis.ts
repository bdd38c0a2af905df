import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Small fake provider APIs for reconcile tests, on real sockets: Stripe's events list, a generic
 * cursor-paginated invoice list (the shape `tekil simulate` serves) and GitHub's hook deliveries.
 * Each records the requests it got, so a test can see cursors, waits and authorisation.
 */
export interface RecordedRequest {
  method: string;
  url: URL;
  authorization: string | undefined;
  at: number;
  /** What the fake answered. */
  status: number;
}

export interface FakeApi {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

async function serve(route: (req: IncomingMessage, url: URL) => Answer): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const answer = route(req, url);
      requests.push({ method: req.method ?? 'GET', url, authorization: req.headers.authorization, at: Date.now(), status: answer.status });
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const unauthorized = (req: IncomingMessage, key: string): Answer | undefined =>
  req.headers.authorization === `Bearer ${key}` ? undefined : { status: 401, body: { error: { message: 'Invalid API Key provided' } } };

export interface StripeEventFixture {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

/** Stripe's `GET /v1/events`: newest first, `object: "list"`, `data`, `has_more`, paged by `starting_after`. */
export async function startFakeStripe(options: { key: string; events: () => StripeEventFixture[] }): Promise<FakeApi> {
  return serve((req, url) => {
    const denied = unauthorized(req, options.key);
    if (denied) return denied;
    if (url.pathname !== '/v1/events') return { status: 404, body: { error: { message: 'Unrecognized request URL' } } };
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 10), 100);
    const gte = Number(url.searchParams.get('created[gte]') ?? 0);
    const lte = url.searchParams.has('created[lte]') ? Number(url.searchParams.get('created[lte]')) : Infinity;
    const types = url.searchParams.getAll('types[]');
    const all = options
      .events()
      .filter((e) => e.created >= gte && e.created <= lte && (types.length === 0 || types.includes(e.type)))
      .sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
    const after = url.searchParams.get('starting_after');
    const start = after ? all.findIndex((e) => e.id === after) + 1 : 0;
    const data = all.slice(start, start + limit).map((e) => ({ ...e, object: 'event', livemode: false }));
    return { status: 200, body: { object: 'list', url: '/v1/events', has_more: start + limit < all.length, data } };
  });
}

export interface InvoiceFixture {
  id: string;
  status: string;
  amount: number;
  paid_amount: number;
  currency: string;
  updated_at: string;
  order_id?: string;
}

export interface FakeInvoicesControl {
  /** Answer 429 with this Retry-After (seconds) to the next n list requests. */
  rateLimitNext(n: number, retryAfterSeconds: number): void;
  /** Serve this many more pages, then answer 500 until called with null. */
  failAfter(pages: number | null): void;
}

/**
 * The generic list API: `GET /v1/invoices?status=…&limit=&cursor=&updated_since=&updated_until=` with a
 * bearer key → `{items, next_cursor}`; 429 with Retry-After when told to.
 */
export async function startFakeInvoices(options: { key: string; invoices: () => InvoiceFixture[] }): Promise<FakeApi & FakeInvoicesControl> {
  let limited = 0;
  let retryAfter = 1;
  let pagesLeft: number | null = null;
  const control = {
    failAfter(pages: number | null) {
      pagesLeft = pages;
    },
    rateLimitNext(n: number, seconds: number) {
      limited = n;
      retryAfter = seconds;
    },
  };
  const api = await serve((req, url) => {
    const denied = unauthorized(req, options.key);
    if (denied) return denied;
    if (url.pathname !== '/v1/invoices') return { status: 404, body: { error: 'not found' } };
    if (limited > 0) {
      limited--;
      return { status: 429, body: { error: 'rate_limited' }, headers: { 'retry-after': String(retryAfter) } };
    }
    if (pagesLeft !== null && pagesLeft-- <= 0) return { status: 500, body: { error: 'internal' } };
    const statuses = url.searchParams.getAll('status');
    const since = url.searchParams.get('updated_since');
    const until = url.searchParams.get('updated_until');
    const all = options
      .invoices()
      .filter((i) => statuses.length === 0 || statuses.includes(i.status))
      .filter((i) => (!since || i.updated_at >= since) && (!until || i.updated_at <= until))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const cursor = url.searchParams.get('cursor');
    // An opaque cursor, as providers give: the last id of the page, encoded.
    const afterId = cursor ? Buffer.from(cursor, 'base64url').toString() : '';
    const rest = all.filter((i) => i.id > afterId);
    const items = rest.slice(0, limit);
    const last = items[items.length - 1];
    return { status: 200, body: { items, next_cursor: rest.length > limit && last ? Buffer.from(last.id).toString('base64url') : null } };
  });
  return Object.assign(api, control);
}

export interface HookDeliveryFixture {
  id: number;
  guid: string;
  delivered_at: string;
  status_code: number;
  event: string;
  action: string | null;
}

/** GitHub's hook deliveries: newest first, paged by `cursor` in a Link header; redelivery by POST. */
export async function startFakeGithub(options: {
  key: string;
  repo: string;
  hookId: number;
  deliveries: () => HookDeliveryFixture[];
}): Promise<FakeApi & { redelivered: number[] }> {
  const redelivered: number[] = [];
  const base = `/repos/${options.repo}/hooks/${options.hookId}/deliveries`;
  let origin = '';
  const api = await serve((req, url) => {
    const denied = unauthorized(req, options.key);
    if (denied) return denied;
    const attempt = new RegExp(`^${base}/(\\d+)/attempts$`).exec(url.pathname);
    if (req.method === 'POST' && attempt) {
      redelivered.push(Number(attempt[1]));
      return { status: 202, body: {} };
    }
    if (url.pathname !== base) return { status: 404, body: { message: 'Not Found' } };
    const all = options.deliveries().sort((a, b) => b.id - a.id);
    const perPage = Number(url.searchParams.get('per_page') ?? 30);
    const cursor = Number(url.searchParams.get('cursor') ?? 0);
    const page = all.slice(cursor, cursor + perPage);
    const headers: Record<string, string> = {};
    if (cursor + perPage < all.length) headers.link = `<${origin}${base}?per_page=${perPage}&cursor=${cursor + perPage}>; rel="next"`;
    return { status: 200, body: page, headers };
  });
  origin = api.url;
  return Object.assign(api, { redelivered });
}

export interface MercanPayInvoiceFixture {
  id: string;
  status: string;
  order_id: string;
  token: string;
  paid_amount: string;
  updated_at: string;
}

/**
 * A list API shaped like MercanPay's: `GET /api/invoices?status=<one>&limit=&before=` with a bearer key →
 * `{data, next_before}`, newest (highest id) first. Strict as a real API may be: exactly one status
 * per call, and any other query parameter (`cursor`, `updated_since`) is a 400.
 */
export async function startFakeMercanPay(options: {
  key: string;
  invoices: () => MercanPayInvoiceFixture[];
}): Promise<FakeApi & Pick<FakeInvoicesControl, 'failAfter'>> {
  let pagesLeft: number | null = null;
  const api = await serve((req, url) => {
    const denied = unauthorized(req, options.key);
    if (denied) return denied;
    if (url.pathname !== '/api/invoices') return { status: 404, body: { error: 'not found' } };
    if (pagesLeft !== null && pagesLeft-- <= 0) return { status: 500, body: { error: 'internal' } };
    const unknown = [...url.searchParams.keys()].filter((k) => !['status', 'limit', 'before'].includes(k));
    if (unknown.length) return { status: 400, body: { error: `unknown parameter ${unknown[0]}` } };
    const statuses = url.searchParams.getAll('status');
    if (statuses.length !== 1) return { status: 400, body: { error: 'status: exactly one value' } };
    const before = url.searchParams.get('before');
    const all = options
      .invoices()
      .filter((i) => i.status === statuses[0] && (before === null || i.id < before))
      .sort((a, b) => (a.id < b.id ? 1 : -1));
    const limit = Number(url.searchParams.get('limit') ?? 100);
    const data = all.slice(0, limit);
    const last = data[data.length - 1];
    return { status: 200, body: { data, next_before: all.length > limit && last ? last.id : null } };
  });
  return Object.assign(api, {
    failAfter(pages: number | null) {
      pagesLeft = pages;
    },
  });
}
