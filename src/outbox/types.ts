import type { LadderSpec } from './ladders.js';

export const deliveryStatuses = ['pending', 'sending', 'succeeded', 'failed', 'cancelled'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

export const endpointSchemes = ['standard', 'paymos', 'stripe'] as const;
export type EndpointScheme = (typeof endpointSchemes)[number];

/** An endpoint as the API and CLI show it (never with its secret, except right after creation). */
export interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  ladder: LadderSpec;
  timeout_ms: number;
  max_in_flight: number;
  scheme: EndpointScheme;
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
}

export interface OutboxMessage {
  id: string;
  event_type: string;
  resource_id: string | null;
  payload: unknown;
  idempotency_key: string | null;
  created_at: Date;
}

export interface Delivery {
  id: number;
  message_id: string;
  endpoint_id: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  created_at: Date;
  completed_at: Date | null;
}

export interface Attempt {
  id: number;
  delivery_id: number;
  attempt: number;
  url: string;
  started_at: Date;
  duration_ms: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}
