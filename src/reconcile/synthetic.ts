import type { GenericReconcileConfig } from '../config/source.js';

/** The header that marks a delivery reconcile recorded, not one a provider sent. */
export const SYNTHETIC_HEADER = 'x-tekil-reconcile';

/** The deterministic id of a synthetic delivery: one per resource and state, so a rerun adds nothing. */
export function syntheticEventId(resourceId: string, status: string): string {
  return `reconcile:${resourceId}:${status}`;
}

/** The headers stored with a recorded delivery: which run recorded it and why. */
export function syntheticHeaders(runId: string): string {
  return JSON.stringify({ [SYNTHETIC_HEADER]: `run ${runId}` });
}

/**
 * The body a webhook for this resource and state would have carried, in the source's own envelope,
 * with the resource as the provider listed it: the handler reads it exactly as it reads a webhook.
 */
export function syntheticBody(
  envelope: GenericReconcileConfig['envelope'],
  input: { eventId: string; eventType: string; occurredAt: Date; resource: unknown },
): Buffer {
  let body: unknown;
  switch (envelope) {
    case 'paymos':
      body = { event_id: input.eventId, event_type: input.eventType, version: 'reconcile', occurred_at: input.occurredAt.toISOString(), data: input.resource };
      break;
    case 'standard':
      body = { type: input.eventType, timestamp: input.occurredAt.toISOString(), data: input.resource };
      break;
    case 'stripe':
      body = {
        id: input.eventId,
        object: 'event',
        type: input.eventType,
        created: Math.floor(input.occurredAt.getTime() / 1000),
        data: { object: input.resource },
      };
      break;
    case 'mercanpay':
      body = { id: input.eventId, type: input.eventType, created_at: input.occurredAt.toISOString(), data: { invoice: input.resource } };
      break;
  }
  return Buffer.from(JSON.stringify(body));
}
