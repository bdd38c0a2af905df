import { z } from 'zod';
import { eventIdModes } from '../outbox/ids.js';
import { endpointSchemes, outboxDeliveryStatuses } from '../outbox/types.js';
import { jsonTime, pageOf } from './answers.js';

/** The sending side's answers (src/api/outbox.ts), over the rows of src/outbox/types.ts and history.ts. */

const status = z.enum(outboxDeliveryStatuses);

export const endpointAnswer = z.object({
  id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  description: z.string().nullable(),
  event_types: z.array(z.string()),
  /** A preset's name or a list of gaps. */
  ladder: z.union([z.string(), z.array(z.string()).readonly()]),
  timeout_ms: z.number(),
  max_in_flight: z.number(),
  scheme: z.enum(endpointSchemes),
  /** The `hmac` scheme's description (header, algorithm, encoding, …); null for the other schemes. */
  hmac: z.record(z.string(), z.unknown()).nullable(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  consecutive_failures: z.number(),
  rate_limit: z.string().nullable(),
  failed_attempts_in_row: z.number(),
  /** While the circuit breaker is open, when its next probe may start. */
  next_probe_at: jsonTime.nullable(),
  event_id: z.enum(eventIdModes),
  /** The settings set on the endpoint itself; the others are its tenant's, else the file's. */
  own_settings: z.array(z.string()),
  /** In the slow lane: its recent p90. */
  slow: z.object({ p90_ms: z.number() }).nullable(),
  created_at: jsonTime,
  updated_at: jsonTime,
});

/** A new endpoint, with its secret (shown in this answer only). */
export const createdEndpointAnswer = endpointAnswer.extend({ secret: z.string() });

export const messageSummaryAnswer = z.object({
  id: z.string(),
  tenant_id: z.string(),
  event_type: z.string(),
  resource_id: z.string().nullable(),
  created_at: jsonTime,
  /** Delivery counts by status, e.g. {"succeeded": 2, "failed": 1}. */
  deliveries: z.partialRecord(status, z.number()),
});

const deliveryFields = {
  id: z.number(),
  message_id: z.string(),
  endpoint_id: z.string(),
  url: z.string(),
  status,
  attempts: z.number(),
  next_attempt_at: jsonTime.nullable(),
  last_status_code: z.number().nullable(),
  last_error: z.string().nullable(),
  last_attempt_at: jsonTime.nullable(),
  created_at: jsonTime,
  completed_at: jsonTime.nullable(),
  /** The id this delivery's receiver sees: the message's, or its own (endpoint option `event_id: delivery`). */
  event_id: z.string(),
};

export const deliveryAnswer = z.object({
  ...deliveryFields,
  event_type: z.string(),
  resource_id: z.string().nullable(),
  last_duration_ms: z.number().nullable(),
});

export const attemptAnswer = z.object({
  id: z.number(),
  delivery_id: z.number(),
  attempt: z.number(),
  url: z.string(),
  started_at: jsonTime,
  duration_ms: z.number(),
  succeeded: z.boolean(),
  status_code: z.number().nullable(),
  error: z.string().nullable(),
  response_body: z.string().nullable(),
});

export const messageDetailAnswer = z.object({
  id: z.string(),
  tenant_id: z.string(),
  event_type: z.string(),
  resource_id: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  created_at: jsonTime,
  /** The envelope as sent (parsed); null once retention trimmed it. */
  payload: z.unknown(),
  payload_trimmed_at: jsonTime.nullable(),
  deliveries: z.array(z.object({ ...deliveryFields, attempt_history: z.array(attemptAnswer) })),
});

export const messagePageAnswer = pageOf(messageSummaryAnswer);
export const deliveryPageAnswer = pageOf(deliveryAnswer);
export const replayedAnswer = z.object({ replayed: z.number() });
export const idAnswer = z.object({ id: z.string() });
