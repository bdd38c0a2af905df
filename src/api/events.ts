import type { ServerResponse } from 'node:http';
import { EventHub } from '../dashboard/events.js';
import { watchTenantDeliveries } from '../tenants/events.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';

/** A comment line now and then keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

/**
 * `GET /api/v1/events`: server-sent events of inbound deliveries as they arrive and change state
 * (`event: delivery`). Authenticated like every admin route (token or session cookie). The browser's
 * EventSource reconnects by itself; a reconnect starts from now. A tenant's caller gets its own
 * outbound deliveries instead (`event: outbound`), never the inbox (src/tenants/events.ts).
 */
export function eventRoutes(routes: ApiRoutes, ctx: Context): void {
  const hub = new EventHub(ctx.db, ctx.logger);
  const open = new Set<ServerResponse>();
  routes.onPreClose(async () => {
    for (const res of open) res.end();
    await hub.close();
  });

  routes.add(
    {
      method: 'GET',
      url: '/events',
      tag: 'events',
      summary: "Server-sent events of inbound deliveries arriving and changing state (a tenant's caller: its outbound deliveries)",
      permission: 'view',
      tenant: true,
      produces: 'text/event-stream',
    },
    async ({ scope }, req, reply) => {
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(': connected\n\n');
      open.add(res);
      const tenantId = scope.tenantId;
      const unsubscribe =
        tenantId === undefined
          ? await hub.subscribe((change) => {
              res.write(`event: delivery\ndata: ${JSON.stringify(change)}\n\n`);
            })
          : watchTenantDeliveries(ctx.db, ctx.logger, tenantId, (row) => {
              res.write(`event: outbound\ndata: ${JSON.stringify(row)}\n\n`);
            });
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
      heartbeat.unref();
      let ended = false;
      const done = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(res);
      };
      req.raw.on('close', done);
      res.on('close', done);
    },
  );
}
