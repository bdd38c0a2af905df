import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Queryable } from '../store/db.js';
import { listInvoicesPage } from '../store/sql/simulate/invoices.js';
import { invoiceStatuses } from '../provider/invoice-events.js';
import { decodeCursor, encodeCursor } from '../cursor.js';

/**
 * The provider's own list of invoices, the record a merchant reconciles its webhooks against:
 * `GET /v1/invoices?status=paid&status=paid_over&limit=100&cursor=…&updated_since=…&updated_until=…`
 * with `Authorization: Bearer <api key>` → `{ items: [...], next_cursor }`. Answers speak like a
 * provider's API (`{ error: { type, message } }`), not like tekil's admin API.
 */
export interface ListApiOptions {
  db: Queryable;
  apiKey: string;
  /** Requests per second before 429 with Retry-After; 0 means no limit. */
  rateLimit: number;
}

export interface InvoiceListItem {
  id: string;
  status: string;
  amount: string;
  paid_amount: string;
  currency: string;
  updated_at: string;
  order_id?: string;
}

export interface InvoiceListPage {
  items: InvoiceListItem[];
  next_cursor: string | null;
}

const MAX_LIMIT = 500;
const isoTime = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const oneOrMany = <T extends z.ZodType>(item: T) => z.union([item, z.array(item)]).transform((v) => (Array.isArray(v) ? v : [v]));

const listQuery = z
  .object({
    status: oneOrMany(z.enum(invoiceStatuses)).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(100),
    cursor: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,400}$/)
      .optional(),
    updated_since: isoTime.optional(),
    updated_until: isoTime.optional(),
  })
  .strict();

function sameKey(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refuse(reply: FastifyReply, status: number, type: string, message: string): FastifyReply {
  return reply.code(status).send({ error: { type, message } });
}

export function buildListApi(options: ListApiOptions): FastifyInstance {
  const app = Fastify({ logger: false });
  let windowStart = 0;
  let used = 0;

  app.get('/v1/invoices', async (request, reply) => {
    const auth = request.headers.authorization ?? '';
    const key = auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '';
    if (!key || !sameKey(key, options.apiKey)) return refuse(reply, 401, 'authentication_error', 'a valid API key is required: Authorization: Bearer <key>');
    if (options.rateLimit > 0) {
      const now = Date.now();
      if (now - windowStart >= 1000) {
        windowStart = now;
        used = 0;
      }
      if (++used > options.rateLimit) {
        reply.header('retry-after', String(Math.max(1, Math.ceil((windowStart + 1000 - now) / 1000))));
        return refuse(reply, 429, 'rate_limit_error', `more than ${options.rateLimit} requests a second`);
      }
    }
    const parsed = listQuery.safeParse(request.query);
    if (!parsed.success)
      return refuse(reply, 400, 'invalid_request_error', parsed.error.issues.map((i) => `${i.path.join('.') || 'query'}: ${i.message}`).join('; '));
    const q = parsed.data;
    // The cursor is the last id of the page, opaque to clients.
    let after: string | null = null;
    try {
      if (q.cursor !== undefined) after = decodeCursor(q.cursor, 1)[0]!;
    } catch (err) {
      return refuse(reply, 400, 'invalid_request_error', `cursor: ${(err as Error).message}`);
    }
    const { rows } = await listInvoicesPage.run(options.db, {
      statuses: q.status ?? null,
      after,
      since: q.updated_since ?? null,
      until: q.updated_until ?? null,
      // One more than asked: whether a next page exists without a second query.
      limit: q.limit + 1,
    });
    const page = rows.slice(0, q.limit);
    const body: InvoiceListPage = {
      items: page.map((r) => ({
        id: r.id,
        status: r.status,
        amount: r.amount,
        paid_amount: r.paid_amount,
        currency: r.currency,
        updated_at: new Date(r.updated_at).toISOString(),
        ...(r.order_id ? { order_id: r.order_id } : {}),
      })),
      next_cursor: rows.length > q.limit ? encodeCursor([page[page.length - 1]!.id]) : null,
    };
    return body;
  });

  app.setNotFoundHandler((_request, reply) => refuse(reply, 404, 'invalid_request_error', 'no such route; the list API is GET /v1/invoices'));
  return app;
}
