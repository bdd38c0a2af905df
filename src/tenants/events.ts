import type { Logger } from '../logger.js';
import { listDeliveries, type OutboxDeliveryRow } from '../outbox/history.js';
import { tenantScope } from '../scope.js';
import type { Queryable } from '../store/db.js';

/** The newest deliveries a tenant's stream watches: a portal's first page and then some. */
const WATCHED = 200;

/**
 * A tenant's live stream (`GET /api/v1/events` with a tenant caller): its own outbound deliveries as
 * they are made and change state (`event: outbound`), nothing of the inbox or of other tenants. It
 * polls the tenant's newest deliveries through the history list's indexed query and sends the ones
 * that are new or changed since the last look. One poll per open stream: portals are few and watched
 * by people, and a poll is one small indexed read.
 */
export function watchTenantDeliveries(db: Queryable, logger: Logger, tenantId: string, send: (row: OutboxDeliveryRow) => void, intervalMs = 2_000): () => void {
  const seen = new Map<string, string>();
  const stateOf = (d: OutboxDeliveryRow) => `${d.status}|${d.attempts}|${d.last_attempt_at?.valueOf() ?? ''}|${d.next_attempt_at?.valueOf() ?? ''}`;
  let first = true;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const scope = tenantScope(tenantId);
  const poll = async () => {
    try {
      const { items } = await listDeliveries(db, scope, { limit: WATCHED });
      const live = new Set<string>();
      for (const d of items.reverse()) {
        const key = String(d.id);
        live.add(key);
        const state = stateOf(d);
        // The first look only learns what is there: the page loaded it already.
        if (!first && seen.get(key) !== state && !stopped) send(d);
        seen.set(key, state);
      }
      for (const key of seen.keys()) if (!live.has(key)) seen.delete(key);
      first = false;
    } catch (err) {
      logger.warn({ err, tenantId }, 'tenant event stream: poll failed');
    }
    if (!stopped) {
      timer = setTimeout(poll, intervalMs);
      timer.unref();
    }
  };
  void poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
