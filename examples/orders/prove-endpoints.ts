// The prove contracts for the example shop (docs/prove.md), on a port of their own beside tekil:
//   GET  /_prove/effects[?ids=a,b] → {"<invoice id>": {"count": <times credited>, "state": "<status>"}}
//   POST /_prove/fail-next        → the next handler run fails after its work started
//   POST /_prove/slow-next?ms=N   → the next handler run takes N ms longer
// The control routes are for staging only: never expose them in production.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queryable } from '../../src/store/db.js';

/** One-shot switches the handlers read: each is used by the next run that takes it. */
export class ProveControl {
  private failNext = false;
  private slowNextMs = 0;

  armFail(): void {
    this.failNext = true;
  }

  armSlow(ms: number): void {
    this.slowNextMs = ms;
  }

  takeFail(): boolean {
    const fail = this.failNext;
    this.failNext = false;
    return fail;
  }

  takeSlowMs(): number {
    const ms = this.slowNextMs;
    this.slowNextMs = 0;
    return ms;
  }
}

/**
 * The invoices and orders named (prove asks with `?ids=a,b`), or all of them. A standalone invoice
 * counts how many times it was credited; an order counts how many times the effect of its current
 * state ran (ledger rows `order_<status>`), so "once, in its last state" holds for both.
 */
export async function readInvoiceEffects(db: Queryable, ids?: readonly string[]): Promise<Record<string, { count: number; state: string }>> {
  const named = ids?.length ? ids : null;
  const res = await db.query<{ id: string; status: string; count: number }>(
    `SELECT id, status, paid_effects AS count FROM example_invoices WHERE $1::text[] IS NULL OR id = ANY ($1::text[])
     UNION ALL
     SELECT o.id, o.status, coalesce(l.n, 0)::int
       FROM example_orders o
       LEFT JOIN (SELECT order_id, kind, count(*) AS n FROM example_ledger GROUP BY order_id, kind) l
         ON l.order_id = o.id AND l.kind = 'order_' || o.status
      WHERE $1::text[] IS NULL OR o.id = ANY ($1::text[])`,
    [named],
  );
  return Object.fromEntries(res.rows.map((r) => [r.id, { count: Number(r.count), state: r.status }]));
}

export interface ProveEndpoints {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startProveEndpoints(options: { db: Queryable; control?: ProveControl; port?: number; host?: string }): Promise<ProveEndpoints> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const answer = (status: number, body?: unknown) => {
      res.statusCode = status;
      if (body !== undefined) res.setHeader('content-type', 'application/json');
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === '/_prove/effects') {
      const ids = url.searchParams.get('ids')?.split(',').filter(Boolean);
      readInvoiceEffects(options.db, ids).then(
        (effects) => answer(200, effects),
        () => answer(500, { error: 'effects unavailable' }),
      );
      return;
    }
    const control = options.control;
    if (control && req.method === 'POST' && url.pathname === '/_prove/fail-next') {
      control.armFail();
      return answer(204);
    }
    if (control && req.method === 'POST' && url.pathname === '/_prove/slow-next') {
      const ms = Number(url.searchParams.get('ms'));
      if (!Number.isInteger(ms) || ms < 0) return answer(400, { error: 'ms must be a whole number of milliseconds' });
      control.armSlow(ms);
      return answer(204);
    }
    answer(404);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
