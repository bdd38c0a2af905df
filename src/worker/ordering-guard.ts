import type { OrderingConfig } from '../config/source.js';
import { compileLocator, type RequestView } from '../signing/request-fields.js';
import type { Queryable } from '../store/db.js';
import { applyResource, readResource } from '../store/sql/inbox/ordering.js';
import type { InboxClaimedDelivery } from './claim-due-deliveries.js';

/** A source's ordering rules, compiled once: where the state is and how states rank. */
export interface OrderingGuard {
  /** Reads the event's state and rank (rank null when the state is absent or not listed). */
  stateOf(request: RequestView): { state: string | null; rank: number | null };
  /** The rank every terminal state shares, or null when the source lists none. */
  readonly terminalRank: number | null;
}

export function compileOrderingGuard(config: OrderingConfig): OrderingGuard {
  const ranks = new Map<string, number>();
  config.states.forEach((s, i) => ranks.set(s, i));
  const terminalRank = config.terminal.length > 0 ? config.states.length : null;
  if (terminalRank !== null) for (const s of config.terminal) ranks.set(s, terminalRank);
  // The same reader extraction uses, so `form:status` reads a form body as `body:data.status` reads JSON.
  const read = config.state ? compileLocator(config.state) : undefined;
  return {
    terminalRank,
    stateOf(request) {
      const v = read?.(request);
      const state = typeof v === 'string' || typeof v === 'number' ? String(v) : null;
      return { state, rank: state === null ? null : (ranks.get(state) ?? null) };
    },
  };
}

export type GuardVerdict = { kind: 'apply'; state: string | null; rank: number | null } | { kind: 'stale'; reason: string };

/**
 * Decides whether an event may be applied to its resource. Stale when the resource already reached
 * a terminal state, when the event's state ranks below the applied one, or when the provider says
 * the event happened before the applied one. The event that set the current state may run again
 * (a replay), since the handler's own writes are idempotent.
 */
export async function checkOrdering(
  tx: Queryable,
  guard: OrderingGuard,
  delivery: InboxClaimedDelivery,
  event: { state: string | null; rank: number | null },
): Promise<GuardVerdict> {
  const apply: GuardVerdict = { kind: 'apply', state: event.state, rank: event.rank };
  if (delivery.resource_id === null) return apply;
  // No lock here: the batch already holds its resources' locks (lock-resources.ts) until it commits,
  // so the check and the update below cannot interleave with another batch's.
  if (delivery.guard_bypass) return apply;
  const res = await readResource.run(tx, { source: delivery.source, resourceId: delivery.resource_id });
  const current = res.rows[0];
  if (!current || current.event_id === delivery.event_id) return apply;
  if (current.rank !== null && current.rank === guard.terminalRank) {
    return { kind: 'stale', reason: `resource already in terminal state ${current.state} (event ${current.event_id})` };
  }
  if (event.rank !== null && current.rank !== null && event.rank < current.rank) {
    return { kind: 'stale', reason: `state ${event.state} is behind the applied state ${current.state} (event ${current.event_id})` };
  }
  if (delivery.occurred_at && current.occurred_at && delivery.occurred_at.getTime() < current.occurred_at.getTime()) {
    return {
      kind: 'stale',
      reason: `occurred ${delivery.occurred_at.toISOString()}, before the applied event ${current.event_id} (${current.occurred_at.toISOString()})`,
    };
  }
  return apply;
}

/** Records the applied event as the resource's current state (after its effect succeeded). */
export async function applyOrdering(tx: Queryable, delivery: InboxClaimedDelivery, verdict: { state: string | null; rank: number | null }): Promise<void> {
  if (delivery.resource_id === null) return;
  await applyResource.run(tx, {
    source: delivery.source,
    resourceId: delivery.resource_id,
    state: verdict.state,
    rank: verdict.rank,
    occurredAt: delivery.occurred_at,
    eventId: delivery.event_id,
  });
}
