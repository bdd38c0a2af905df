import type { HmacSchemeOptions, SchemeName } from '../signing/index.js';
import type { DestinationKind } from '../destinations/broker-url.js';
import type { EventIdMode } from './ids.js';
import type { LadderSpec } from './ladders.js';
import type { EndpointRow } from '../store/sql/outbox/endpoints.js';
import type { AttemptRow, DeliveryListRow } from '../store/sql/outbox/history.js';

export const outboxDeliveryStatuses = ['pending', 'sending', 'succeeded', 'failed', 'cancelled'] as const;
export type OutboxDeliveryStatus = (typeof outboxDeliveryStatuses)[number];

/** Every scheme tekil verifies, it also signs with: an endpoint speaks whichever its receiver expects. */
export const endpointSchemes = ['standard', 'paymos', 'stripe', 'github', 'shopify', 'hmac'] as const satisfies readonly SchemeName[];
export type EndpointScheme = (typeof endpointSchemes)[number];

/**
 * An endpoint as the API and CLI show it (never with its secret, except right after creation): its row,
 * with the jsonb and text columns this module validated before writing them given their types.
 */
export interface Endpoint extends Omit<EndpointRow, 'kind' | 'ladder' | 'scheme' | 'hmac' | 'event_id'> {
  /** `http`, or the broker it publishes to (docs/destinations.md). */
  kind: DestinationKind;
  ladder: LadderSpec;
  scheme: EndpointScheme;
  /** The `hmac` scheme's description (header, algorithm, encoding, …); null for the other schemes. */
  hmac: HmacSchemeOptions | null;
  /** The event id its receivers see: the message's (`message`, the default) or the delivery's own (`delivery`). */
  event_id: EventIdMode;
}

export interface OutboxMessage {
  id: string;
  event_type: string;
  resource_id: string | null;
  payload: unknown;
  idempotency_key: string | null;
  created_at: Date;
}

/** A delivery as its message's detail lists it: its list row without the list's own columns, with its event id. */
export interface OutboxDelivery extends Omit<DeliveryListRow, 'event_id_mode' | 'event_type' | 'resource_id' | 'last_duration_ms'> {
  /** The event id this delivery's receiver sees: the message id, or its own (endpoint option `event_id: delivery`). */
  event_id: string;
}

/** One attempt of a delivery, as stored. */
export type OutboxAttempt = AttemptRow;

/** A delivery the dispatcher claimed for one attempt, with what the attempt needs from its endpoint. */
export interface OutboxClaimedDelivery {
  /** The delivery's tenant: its key is (tenant_id, id) (migration 025). */
  tenant_id: string;
  id: number;
  message_id: string;
  endpoint_id: string;
  /** The destination: the extra destination's URL, else the endpoint's. */
  url: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  ladder_base: number;
  previous_status: OutboxDeliveryStatus;
  /** When the abandoned attempt started; null unless previous_status is `sending`. */
  previous_attempt_at: Date | null;
  payload: Uint8Array;
  /** The message's type: GitHub and Shopify requests name it in a header. */
  event_type: string;
  scheme: string;
  /** The `hmac` scheme's options as JSON text; null for the other schemes. */
  scheme_options_json: string | null;
  timeout_ms: number;
  /** The endpoint's ladder as JSON text, parsed (and cached) only when an attempt fails. */
  ladder_json: string;
  /** The endpoint's updated_at in epoch milliseconds: the key of the cached signing secrets. */
  endpoint_updated_ms: number;
  /** The endpoint's failure streak when claimed; a success only needs to reset a non-zero one. */
  consecutive_failures: number;
  /** Failed attempts in a row when claimed (the circuit breaker's count). */
  failed_attempts_in_row: number;
  /** Milliseconds to wait before the request starts (the endpoint's rate limit). */
  wait_ms: number;
  /** When the request may start, on the database's clock (epoch ms); 0 when the endpoint has no rate limit. */
  send_at_ms: number;
  /** The gap the endpoint's rate limit makes between two requests; null without one. */
  send_interval_ms: number | null;
  /** The publish span's traceparent (migration 022): the attempt's span is its child. Null when published untraced. */
  traceparent: string | null;
  /** The endpoint's event id mode: `delivery` gives this delivery its own id (ids.ts, eventIdFor). */
  event_id_mode: string;
  /** The endpoint's recent p90 (ms) when it is in the slow lane (migration 026); null otherwise. */
  slow_p90_ms: number | null;
}

/** One finished attempt and what happens to its delivery next. */
export interface OutboxCompletion {
  /** The delivery's tenant, from its claim: the completion finds the delivery by (tenant_id, id). */
  tenantId: string;
  deliveryId: number;
  lease: string;
  messageId: string;
  endpointId: string;
  attempt: number;
  url: string;
  startedAt: Date;
  durationMs: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  /** True when the endpoint had a failure streak at claim time, which a success must reset. */
  endpointHadFailures: boolean;
  /** For a failed attempt: how long an open circuit breaker waits before its next probe. */
  probeDelayMs: number;
  /** The delivery's new status: `pending` again (with delayMs), `succeeded` or `failed`. */
  next: 'pending' | 'succeeded' | 'failed';
  delayMs: number;
}
