import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import { EventHub } from '../dashboard/events.js';
import { type StreamCap, StreamLimits } from '../tenants/stream-limits.js';
import { TenantStreams } from '../tenants/events.js';
import { quotasOf } from '../tenants/quotas.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';

/** A comment line now and then keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

/**
 * `GET /api/v1/events`: server-sent events of inbound deliveries as they arrive and change state
 * (`event: delivery`). Authenticated like every admin route (token or session cookie). The browser's
 * EventSource reconnects by itself; a reconnect starts from now. A tenant's caller gets its own
 * outbound deliveries instead (`event: outbound`), never the inbox (src/tenants/events.ts).
 *
 * Streams are capped per tenant (its `streams` quota), per credential and per client address
 * (`tenants.streams`); one past a cap is answered `429 TOO_MANY_STREAMS` before the stream opens.
 */
export function eventRoutes(routes: ApiRoutes, ctx: Context): void {
  const hub = new EventHub(ctx.db, ctx.logger);
  const streamsConfig = ctx.config.tenants.streams;
  // One registry may see the routes registered twice (two apps on one context): reuse what is there.
  const polls =
    (ctx.metrics.getSingleMetric('tekil_event_stream_tenant_polls_total') as Counter | undefined) ??
    new Counter({
      name: 'tekil_event_stream_tenant_polls_total',
      help: "Reads of a tenant's newest deliveries for its open event streams: one per tenant and interval, whatever its number of streams",
      registers: [ctx.metrics],
    });
  const openStreams =
    (ctx.metrics.getSingleMetric('tekil_event_streams_open') as Gauge<'caller'> | undefined) ??
    new Gauge({
      name: 'tekil_event_streams_open',
      help: 'Event streams open in this process (GET /api/v1/events), by caller: tenant or operator',
      labelNames: ['caller'],
      registers: [ctx.metrics],
    });
  const tenantStreams = new TenantStreams(ctx.db, ctx.logger, streamsConfig.poll_interval, () => polls.inc());
  const limits = new StreamLimits();
  const open = new Set<ServerResponse>();
  routes.onPreClose(async () => {
    for (const res of open) res.end();
    tenantStreams.close();
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
      const tenantId = scope.tenantId;
      const caps: Array<{ cap: StreamCap; key: string; limit: number }> = [
        { cap: 'session', key: credentialKey(req), limit: streamsConfig.per_session },
        { cap: 'address', key: req.ip, limit: streamsConfig.per_address },
      ];
      if (tenantId !== undefined) {
        caps.unshift({ cap: 'tenant', key: tenantId, limit: (await quotasOf(ctx.db, ctx.config.tenants.quotas, tenantId)).streams });
      }
      const caller = tenantId === undefined ? 'operator' : 'tenant';
      const releaseCaps = limits.acquire(caps);
      openStreams.inc({ caller });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        releaseCaps();
        openStreams.dec({ caller });
      };
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
      let unsubscribe: () => void;
      try {
        unsubscribe =
          tenantId === undefined
            ? await hub.subscribe((change) => {
                res.write(`event: delivery\ndata: ${JSON.stringify(change)}\n\n`);
              })
            : tenantStreams.subscribe(tenantId, (row) => {
                res.write(`event: outbound\ndata: ${JSON.stringify(row)}\n\n`);
              });
      } catch (err) {
        release();
        open.delete(res);
        res.destroy();
        throw err;
      }
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
      heartbeat.unref();
      let ended = false;
      const done = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        unsubscribe();
        release();
        open.delete(res);
      };
      req.raw.on('close', done);
      res.on('close', done);
      // A client gone while the stream was being set up: its close came before anyone listened.
      if (res.destroyed || req.raw.destroyed) done();
    },
  );
}

/** The credential a request came with (its bearer token, else its session cookie), as a key: a session. */
function credentialKey(req: FastifyRequest): string {
  const presented = req.headers.authorization ?? req.headers.cookie ?? '';
  return createHash('sha256').update(presented).digest('base64url');
}
