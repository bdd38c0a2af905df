import { defineStatement } from '../statement.js';

/** The channel publish notifies (in migration 010's function); the dispatcher listens on it. */
export const OUTBOX_CHANNEL = 'tekil_outbox';

export interface PublishMessageParams extends Record<string, unknown> {
  /** The tenant the message belongs to: it fans out to that tenant's endpoints only (migration 016). */
  tenant_id: string;
  id: string;
  event_type: string;
  resource_id: string | null;
  payload: Buffer;
  idempotency_key: string | null;
  extra_endpoint_ids: string[];
  extra_urls: string[];
}

/**
 * One call: the message, one delivery per matching enabled endpoint, the extra destinations, and a
 * NOTIFY that Postgres delivers only if the caller's transaction commits. Returns no row when the
 * idempotency key was used before. The statement itself is the function tekil_outbox_publish
 * (migration 010), which keeps its plan per connection: the caller's connection parses one SELECT.
 *
 * One wake-up serves concurrent publishers: only the transaction that gets the wake-up lock (an
 * advisory lock held to its end) notifies. Postgres commits notifying transactions one at a time (it
 * holds a global lock across each one's commit), so a NOTIFY in every publishing transaction turned 32
 * concurrent callers' group commit into a queue. A publisher that finds the lock taken skips its
 * NOTIFY: the holder's wakes the dispatcher, which claims again shortly after every wake-up for
 * publishers that commit after the holder (src/outbox/dispatcher.ts), with polling as the backstop.
 */
export const publishMessage = defineStatement<PublishMessageParams, { id: string; deliveries: number }>(
  'tekil_outbox_publish',
  `SELECT id, deliveries FROM tekil_outbox_publish($tenant_id, $id, $event_type, $resource_id, $payload, $idempotency_key,
                                                   $extra_endpoint_ids::text[], $extra_urls::text[])`,
  'prepared',
);

export interface PublishMessagesParams extends Record<string, unknown> {
  tenant_ids: string[];
  ids: string[];
  event_types: string[];
  resource_ids: Array<string | null>;
  /** Every payload back to back, cut apart by payload_starts (from 1) and payload_lengths. */
  payloads: Buffer;
  payload_starts: number[];
  payload_lengths: number[];
  /** Distinct, and in the order to lock them in (sorted: see migration 011). */
  idempotency_keys: Array<string | null>;
  /** Every message's extra destinations, flat; extra_ns names each one's message (its position, from 1). */
  extra_ns: number[];
  extra_endpoint_ids: string[];
  extra_urls: string[];
}

/**
 * Many messages in one statement (one transaction, one commit) through tekil_outbox_publish_many
 * (migration 011): one insert and one fan-out for all. Returns a row per message, `n` its position from
 * 1: a new message with its deliveries, or, for a key used before, the first message's id with
 * `duplicate`. The payloads travel as one bytea cut apart by offsets, as the receiver's bodies do (a
 * bytea[] would go as hex text). One text for any number of messages, so it is prepared once.
 */
export const publishMessages = defineStatement<PublishMessagesParams, { n: number; id: string; deliveries: number; duplicate: boolean }>(
  'tekil_outbox_publish_many',
  `SELECT n, id, deliveries, duplicate
   FROM tekil_outbox_publish_many($tenant_ids::text[], $ids::text[], $event_types::text[], $resource_ids::text[], $payloads::bytea,
                                  $payload_starts::int[], $payload_lengths::int[], $idempotency_keys::text[],
                                  $extra_ns::int[], $extra_endpoint_ids::text[], $extra_urls::text[])`,
  'prepared',
);

/** The first message a tenant published under an idempotency key (keys are per tenant: migration 025). */
export const messageByIdempotencyKey = defineStatement<{ tenantId: string; idempotencyKey: string | null }, { id: string }>(
  'tekil_outbox_message_by_idempotency_key',
  'SELECT id FROM outbox_messages WHERE tenant_id = $tenantId AND idempotency_key = $idempotencyKey',
);

/**
 * Tracing on only (migration 022): the publish span's traceparent on the messages just published, in
 * their publishing transaction, so a dispatcher never claims one of them without it.
 */
export const setMessageTraceparents = defineStatement<{ tenantIds: string[]; ids: string[]; traceparents: string[] }>(
  'tekil_outbox_set_traceparents',
  `UPDATE outbox_messages m SET traceparent = x.traceparent
   FROM unnest($tenantIds::text[], $ids::text[], $traceparents::text[]) AS x (tenant_id, id, traceparent)
   WHERE m.tenant_id = x.tenant_id AND m.id = x.id`,
);
