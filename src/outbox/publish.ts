import { TekilError } from '../errors.js';
import { PG_FOREIGN_KEY_VIOLATION, PG_NO_DATA_FOUND, isStoreUnavailable, pgErrorCode } from '../pg-error.js';
import {
  messageByIdempotencyKey,
  OUTBOX_CHANNEL,
  publishMessage,
  setMessageTraceparents,
  type PublishMessageParams,
} from '../store/sql/outbox/publish-message.js';
import { failSpan, traceparentOf, tracing, type Tracing } from '../telemetry/tracing.js';
import { newEventId } from './ids.js';
import { acceptsQueryOptions } from '../store/db.js';

/**
 * Anything that runs a parameterised query: tekil's own `Queryable`, a node-postgres `Client` or
 * `PoolClient` inside the caller's BEGIN … COMMIT, or a PGlite transaction. Only `query` is used.
 */
export interface SqlExecutor {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A destination for one message only (an invoice's `callback_url`), signed and retried like `endpointId`. */
export interface ExtraDestination {
  url: string;
  /** The endpoint whose secret, scheme, ladder and timeout this destination uses. */
  endpointId: string;
}

export interface PublishInput {
  /**
   * The tenant (one per merchant) the message belongs to: it fans out to that tenant's endpoints only.
   * Defaults to the default tenant, which a single-tenant installation uses for everything.
   */
  tenantId?: string | undefined;
  /** Event type, e.g. `invoice.paid`. Endpoints subscribe to exact types or `invoice.*`. */
  type: string;
  /** The business object the event is about (`inv_…`); stays the same across its state changes. */
  resourceId?: string | null | undefined;
  /** Any JSON value: the envelope's `data` (unused with `body`). */
  data?: unknown;
  /** A repeat with the same key returns the first message instead of making another. */
  idempotencyKey?: string | undefined;
  extraDestinations?: readonly ExtraDestination[] | undefined;
  /** When the event happened; defaults to now. */
  occurredAt?: Date | undefined;
  /**
   * The exact bytes to send instead of tekil's envelope (then `data` is not used): for a sender that
   * must speak another format's natural envelope, e.g. a provider's `{event_id, event_type, data}`.
   * Given the event id tekil assigns, so the body can carry the same id the headers and retries carry.
   * Stored as-is and sent as-is to every destination, in every retry and replay.
   */
  body?: ((eventId: string) => Uint8Array) | undefined;
}

export interface PublishResult {
  /** The event id (`evt_…`) every destination receives, in retries and replays alike. */
  id: string;
  /** Delivery rows created (0 for a repeat of an idempotency key). */
  deliveries: number;
  /** True when the idempotency key had been used: `id` is the first message's. */
  duplicate: boolean;
}

/** Channel the dispatcher listens on; NOTIFY is delivered when the publishing transaction commits. */
export { OUTBOX_CHANNEL };

/**
 * The message envelope, identical for every destination. It carries both the Standard Webhooks names
 * (`type`, `timestamp`) and the names many payment providers use (`event_id`, `event_type`,
 * `occurred_at`), so receivers written for either read it without a mapping.
 */
export function buildEnvelope(id: string, input: PublishInput, occurredAt: Date): Buffer {
  const timestamp = occurredAt.toISOString();
  return Buffer.from(
    JSON.stringify({
      event_id: id,
      event_type: input.type,
      type: input.type,
      occurred_at: timestamp,
      timestamp,
      resource_id: input.resourceId ?? null,
      data: input.data ?? null,
    }),
    'utf8',
  );
}

/** A caller's own body, checked only for being bytes: what the receiver parses is the caller's format. */
function exactBody(bytes: Uint8Array): Buffer {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength === 0) throw new TekilError('VALIDATION_FAILED', 'body: a non-empty byte array');
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The tenant every installation has (migration 016); messages and endpoints without one belong to it. */
export const DEFAULT_TENANT_ID = 'default';

function validate(input: PublishInput): void {
  if (input.tenantId !== undefined && (typeof input.tenantId !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(input.tenantId))) {
    throw new TekilError('VALIDATION_FAILED', 'tenantId: 1 to 64 letters, digits, _ . : -');
  }
  if (typeof input.type !== 'string' || !/^[A-Za-z0-9_.:-]{1,255}$/.test(input.type)) {
    throw new TekilError('VALIDATION_FAILED', 'type: 1 to 255 letters, digits, _ . : -');
  }
  // Postgres refuses NUL in text: refused here, with the field named, instead of by the store.
  if (input.resourceId != null && (typeof input.resourceId !== 'string' || input.resourceId.length > 255 || input.resourceId.includes('\u0000'))) {
    throw new TekilError('VALIDATION_FAILED', 'resource_id: a string of at most 255 characters, without NUL bytes');
  }
  if (
    input.idempotencyKey !== undefined &&
    (typeof input.idempotencyKey !== 'string' ||
      input.idempotencyKey.length === 0 ||
      input.idempotencyKey.length > 255 ||
      input.idempotencyKey.includes('\u0000'))
  ) {
    throw new TekilError('VALIDATION_FAILED', 'idempotency key: 1 to 255 characters, without NUL bytes');
  }
  for (const extra of input.extraDestinations ?? []) {
    if (!/^https?:\/\/[^\u0000]*$/.test(extra.url)) throw new TekilError('VALIDATION_FAILED', 'an extra destination is not an http(s) URL');
    if (!extra.endpointId || extra.endpointId.includes('\u0000')) {
      throw new TekilError('VALIDATION_FAILED', 'an extra destination needs the endpointId whose settings sign it');
    }
  }
}

/** A message ready for the store: validated, with its event id and the exact bytes to send. */
export interface PreparedMessage {
  params: PublishMessageParams;
  /** The validated input's type, for error messages. */
  type: string;
  /** With tracing on: the publish span's, stored on the message (migration 022) for its dispatch spans. */
  traceparent?: string;
}

/** Validates the input and builds the message (id, payload): everything publishing does before the store. */
export function prepareMessage(input: PublishInput): PreparedMessage {
  validate(input);
  const id = newEventId();
  const payload = input.body ? exactBody(input.body(id)) : buildEnvelope(id, input, input.occurredAt ?? new Date());
  const extras = input.extraDestinations ?? [];
  return {
    type: input.type,
    params: {
      tenant_id: input.tenantId ?? DEFAULT_TENANT_ID,
      id,
      event_type: input.type,
      resource_id: input.resourceId ?? null,
      payload,
      idempotency_key: input.idempotencyKey ?? null,
      extra_endpoint_ids: extras.map((x) => x.endpointId),
      extra_urls: extras.map((x) => x.url),
    },
  };
}

/** The coded error a failed publishing statement answers; `what` names the message(s) in it. */
export function publishFailure(err: unknown, what: string): TekilError {
  if (pgErrorCode(err) === PG_NO_DATA_FOUND) {
    // The tenant check of migration 016: its message names the tenant ("no tenant m_123").
    const reason = err instanceof Error ? err.message : 'no such tenant';
    return new TekilError('TENANT_NOT_FOUND', `publishing ${what} failed: ${reason}`, { cause: err });
  }
  if (pgErrorCode(err) === PG_FOREIGN_KEY_VIOLATION) {
    return new TekilError('VALIDATION_FAILED', 'an extra destination names an endpoint that does not exist', { cause: err });
  }
  // The store's own text stays in the cause (and the logs): callers get tekil's words only.
  if (isStoreUnavailable(err)) return new TekilError('STORE_UNAVAILABLE', `publishing ${what} failed: the store is unavailable`, { cause: err });
  return new TekilError('STORE_REJECTED', `publishing ${what} failed: the store refused the message`, { cause: err });
}

/**
 * Publishes an event inside the caller's own transaction: the message and its deliveries commit or roll
 * back together with the caller's business change, so an event can be neither lost nor sent for a
 * change that never happened.
 */
export async function publish(tx: SqlExecutor, input: PublishInput): Promise<PublishResult> {
  const t = tracing();
  if (!t) return publishPrepared(tx, prepareMessage(input));
  return tracedPublish(t, input, (message) => publishPrepared(tx, message));
}

/**
 * Publishing inside a `tekil.publish` span (a child of the caller's current span, if it traces): the
 * message carries the span's traceparent to the store, and each dispatch attempt's span is its child.
 */
export async function tracedPublish(t: Tracing, input: PublishInput, run: (message: PreparedMessage) => Promise<PublishResult>): Promise<PublishResult> {
  const span = t.tracer.startSpan(
    'tekil.publish',
    { kind: t.kind.producer, attributes: { 'tekil.event_type': String(input.type), 'tekil.tenant_id': input.tenantId ?? DEFAULT_TENANT_ID } },
    t.active(),
  );
  try {
    const message = prepareMessage(input);
    message.traceparent = traceparentOf(span);
    span.setAttribute('tekil.message_id', message.params.id);
    const result = await run(message);
    // A repeat of an idempotency key publishes nothing: the first message keeps its own trace.
    if (result.duplicate) span.setAttributes({ 'tekil.message_id': result.id, 'tekil.duplicate': true });
    span.setAttribute('tekil.deliveries', result.deliveries);
    return result;
  } catch (err) {
    failSpan(t, span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** publish() for a message already prepared (the API's group commit falls back to this one by one). */
export async function publishPrepared(tx: SqlExecutor, message: PreparedMessage): Promise<PublishResult> {
  let rows: Array<{ id: string; deliveries: number }>;
  try {
    // On tekil's own store the statement is prepared (parsing and planning it cost Postgres about as
    // much as running it); a caller's node-postgres client gets it unnamed.
    rows = acceptsQueryOptions(tx) ? (await publishMessage.run(tx, message.params)).rows : await publishMessage.runForeign(tx, message.params);
  } catch (err) {
    throw publishFailure(err, message.type);
  }
  const row = rows[0];
  if (row && message.traceparent)
    await storeTraceparents(tx, { tenantIds: [message.params.tenant_id], ids: [row.id], traceparents: [message.traceparent] }, message.type);
  if (row) return { id: row.id, deliveries: Number(row.deliveries), duplicate: false };
  const firstRow = (await messageByIdempotencyKey.runForeign(tx, { tenantId: message.params.tenant_id, idempotencyKey: message.params.idempotency_key }))[0];
  if (!firstRow) throw new TekilError('INTERNAL', 'idempotency key conflict without a stored message');
  return { id: firstRow.id, deliveries: 0, duplicate: true };
}

/** Tracing on: the publish spans' traceparents on their messages, in the publishing transaction. */
export async function storeTraceparents(
  tx: SqlExecutor,
  messages: { tenantIds: string[]; ids: string[]; traceparents: string[] },
  what: string,
): Promise<void> {
  try {
    if (acceptsQueryOptions(tx)) await setMessageTraceparents.run(tx, messages);
    else await setMessageTraceparents.runForeign(tx, messages);
  } catch (err) {
    throw publishFailure(err, what);
  }
}
