import type { Logger } from '../logger.js';
import { listDeliveries, type OutboxDeliveryRow } from '../outbox/history.js';
import { tenantScope } from '../scope.js';
import type { Queryable } from '../store/db.js';

/** The newest deliveries a tenant's streams watch: a portal's first page and then some. */
const WATCHED = 200;

type Send = (row: OutboxDeliveryRow) => void;

/** One tenant's watch: one poll, fanned out to each of its open streams. */
interface Watch {
  streams: Set<Send>;
  seen: Map<string, string>;
  first: boolean;
  timer: NodeJS.Timeout | undefined;
  stopped: boolean;
}

const stateOf = (d: OutboxDeliveryRow) => `${d.status}|${d.attempts}|${d.last_attempt_at?.valueOf() ?? ''}|${d.next_attempt_at?.valueOf() ?? ''}`;

/**
 * Tenants' live streams (`GET /api/v1/events` with a tenant caller): a tenant's own outbound deliveries as
 * they are made and change state (`event: outbound`), nothing of the inbox or of other tenants. One poll
 * per tenant and interval, whatever the number of its open streams: each poll reads the tenant's newest
 * deliveries (one page of its key, migration 030) and sends the new or changed ones to every stream of
 * the tenant. (One poll per stream let 100 streams of one merchant read 100 pages every 2 s, and took
 * every other client's webhooks from 7 ms to 2.3 s.) It runs only while the tenant has a stream open.
 */
export class TenantStreams {
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    private readonly intervalMs = 2_000,
    /** Called once per poll (a metric): one per tenant with open streams and interval. */
    private readonly onPoll: () => void = () => {},
  ) {}

  /** Open streams of a tenant in this process. */
  openCount(tenantId: string): number {
    return this.watches.get(tenantId)?.streams.size ?? 0;
  }

  subscribe(tenantId: string, send: Send): () => void {
    let watch = this.watches.get(tenantId);
    if (!watch) {
      watch = { streams: new Set(), seen: new Map(), first: true, timer: undefined, stopped: false };
      this.watches.set(tenantId, watch);
      void this.poll(tenantId, watch);
    }
    watch.streams.add(send);
    const w = watch;
    return () => {
      w.streams.delete(send);
      if (w.streams.size === 0) this.stop(tenantId, w);
    };
  }

  close(): void {
    for (const [tenantId, watch] of this.watches) this.stop(tenantId, watch);
  }

  private stop(tenantId: string, watch: Watch): void {
    watch.stopped = true;
    clearTimeout(watch.timer);
    if (this.watches.get(tenantId) === watch) this.watches.delete(tenantId);
  }

  private async poll(tenantId: string, watch: Watch): Promise<void> {
    try {
      this.onPoll();
      const { items } = await listDeliveries(this.db, tenantScope(tenantId), { limit: WATCHED });
      const live = new Set<string>();
      for (const d of items.reverse()) {
        const key = String(d.id);
        live.add(key);
        const state = stateOf(d);
        // The first look only learns what is there: the page loaded it already. A stream that joins a
        // running watch hears of changes from its next look on, as a lone stream did.
        if (!watch.first && watch.seen.get(key) !== state && !watch.stopped) for (const send of watch.streams) send(d);
        watch.seen.set(key, state);
      }
      for (const key of watch.seen.keys()) if (!live.has(key)) watch.seen.delete(key);
      watch.first = false;
    } catch (err) {
      this.logger.warn({ err, tenantId }, 'tenant event stream: poll failed');
    }
    if (!watch.stopped) {
      watch.timer = setTimeout(() => void this.poll(tenantId, watch), this.intervalMs);
      watch.timer.unref();
    }
  }
}
