import type { Queryable } from '../store/db.js';
import { TekilError } from '../errors.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../cursor.js';
import { scopeTenantId, tenantScope, type Scope } from '../scope.js';
import {
  type DeliveryListParams,
  type DeliveryListRow,
  type MessageListRow,
  selectAttempts,
  selectMessage,
  listDeliveriesStatement,
  listQueuedDeliveriesStatement,
  listMessagesStatement,
} from '../store/sql/outbox/history.js';
import { listTenantDeliveriesStatement, listTenantMessagesStatement } from '../store/sql/outbox/tenant-history.js';
import { messageTenant } from '../store/sql/tenants/ownership.js';
import { eventIdFor } from './ids.js';
import type { OutboxAttempt, OutboxDelivery, OutboxDeliveryStatus } from './types.js';

/**
 * Filters shared by the message and delivery lists. Times bound the creation time. Whose messages
 * they are is not a filter but the list's required scope (src/scope.ts).
 */
export interface HistoryFilter {
  endpointId?: string | undefined;
  type?: string | undefined;
  status?: OutboxDeliveryStatus | undefined;
  resourceId?: string | undefined;
  messageId?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** Opaque: the `next_cursor` of the previous page. */
  cursor?: string | undefined;
  limit?: number | undefined;
}

export interface Page<T> {
  items: T[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

export const MAX_PAGE = 1000;

function pageLimit(limit: number | undefined): number {
  return Math.min(Math.max(Math.trunc(limit ?? 50), 1), MAX_PAGE);
}

/** A list's cursor is the last id of the previous page (one key part). */
function cursorKey(cursor: string | undefined): string | null {
  return cursor ? decodeCursor(cursor, 1)[0]! : null;
}

/** A message list's cursor is the last message id of the previous page. */
function messageCursor(cursor: string | undefined): string | null {
  const id = cursorKey(cursor);
  if (id !== null && !/^evt_[0-9a-z]{1,40}$/.test(id)) throw invalidCursor('its key is not a message id');
  return id;
}

/** A message in a list: its row, with delivery counts by status, e.g. {"succeeded": 2, "failed": 1}. */
export type MessageSummary = MessageListRow;

/** Messages in the scope, newest first (ids are time-ordered). Endpoint and status filters match any of its deliveries. */
export async function listMessages(db: Queryable, scope: Scope, f: HistoryFilter): Promise<Page<MessageSummary>> {
  const limit = pageLimit(f.limit);
  const values = {
    before_id: messageCursor(f.cursor),
    event_type: f.type ?? null,
    resource_id: f.resourceId ?? null,
    since: f.since ?? null,
    until: f.until ?? null,
    endpoint_id: f.endpointId ?? null,
    tenant_id: scopeTenantId(scope),
    status: f.status ?? null,
    limit: limit + 1,
  };
  // One tenant's page is chosen from its own index first (see the statement).
  const { rows } =
    scope.tenantId !== undefined
      ? await listTenantMessagesStatement.run(db, { ...values, tenant_id: scope.tenantId })
      : await listMessagesStatement.run(db, values);
  const items = rows.slice(0, limit);
  return { items, next_cursor: rows.length > limit ? encodeCursor([String(items[items.length - 1]!.id)]) : null };
}

export interface OutboxDeliveryRow extends OutboxDelivery, Pick<DeliveryListRow, 'event_type' | 'resource_id' | 'last_duration_ms'> {}

/** Deliveries in the scope, newest first, with their message's type and resource id and the last attempt's duration. */
export async function listDeliveries(db: Queryable, scope: Scope, f: HistoryFilter): Promise<Page<OutboxDeliveryRow>> {
  const limit = pageLimit(f.limit);
  const cursor = cursorKey(f.cursor);
  // Delivery ids are bigint: a number past its range is not a cursor tekil made.
  if (cursor !== null && (!/^\d{1,19}$/.test(cursor) || BigInt(cursor) > 9_223_372_036_854_775_807n)) {
    throw invalidCursor('its key is not a delivery id');
  }
  const values: DeliveryListParams = {
    before_id: cursor,
    endpoint_id: f.endpointId ?? null,
    tenant_id: scopeTenantId(scope),
    status: f.status ?? null,
    event_type: f.type ?? null,
    resource_id: f.resourceId ?? null,
    since: f.since ?? null,
    until: f.until ?? null,
    message_id: f.messageId ?? null,
    limit: limit + 1,
  };
  // A message's deliveries are its tenant's: the tenant leads every outbox key (migration 025).
  if (values.message_id !== null && values.tenant_id === null) {
    const message = (await messageTenant.run(db, { id: values.message_id })).rows[0];
    if (!message) return { items: [], next_cursor: null };
    values.tenant_id = message.tenant_id;
  }
  // One tenant's are read along its own key (its portal's list: see the statement); otherwise
  // unsettled and failed deliveries are found through the queue (see that statement).
  const queued = f.status === 'pending' || f.status === 'sending' || f.status === 'failed';
  const { rows } =
    values.tenant_id !== null
      ? await listTenantDeliveriesStatement.run(db, { ...values, tenant_id: values.tenant_id })
      : queued
        ? await listQueuedDeliveriesStatement.run(db, { ...values, failed: f.status === 'failed' })
        : await listDeliveriesStatement.run(db, values);
  // The id the receiver saw: the message's, or the delivery's own (an endpoint with `event_id: delivery`).
  const items = rows.slice(0, limit).map(({ event_id_mode, ...d }) => ({ ...d, event_id: eventIdFor(event_id_mode, d.message_id, d.id) }));
  return { items, next_cursor: rows.length > limit ? encodeCursor([String(items[items.length - 1]!.id)]) : null };
}

export interface MessageDetail {
  id: string;
  /** The tenant (one per merchant) it was published for. */
  tenant_id: string;
  event_type: string;
  resource_id: string | null;
  idempotency_key: string | null;
  created_at: Date;
  /** The envelope as sent (parsed); `payload_text` holds the exact bytes when they are not JSON. Null once trimmed. */
  payload: unknown;
  /** When retention trimmed the payload and the kept answers (the message and its history stay); null while kept. */
  payload_trimmed_at: Date | null;
  /** When the payload and the kept answers were erased on request (docs/erasure.md); null unless erased. */
  payload_erased_at: Date | null;
  deliveries: Array<OutboxDelivery & { attempt_history: OutboxAttempt[] }>;
}

/** One message of the scope: another tenant's is answered as one that does not exist. */
export async function getMessage(db: Queryable, scope: Scope, id: string): Promise<MessageDetail> {
  const { rows } = await selectMessage.run(db, { id });
  const m = rows[0];
  if (!m || (scope.tenantId !== undefined && m.tenant_id !== scope.tenantId)) throw new TekilError('NOT_FOUND', `no message ${id}`);
  const deliveries = await listDeliveries(db, tenantScope(m.tenant_id), { messageId: id, limit: MAX_PAGE });
  const attempts = await selectAttempts.run(db, { deliveryIds: deliveries.items.map((d) => d.id) });
  const text = Buffer.from(m.payload).toString('utf8');
  let payload: unknown = text;
  try {
    payload = m.trimmed_at ? null : JSON.parse(text);
  } catch {
    // stored bytes are always JSON when published through tekil; keep the text otherwise
  }
  return {
    id: m.id,
    tenant_id: m.tenant_id,
    event_type: m.event_type,
    resource_id: m.resource_id,
    idempotency_key: m.idempotency_key,
    created_at: m.created_at,
    payload,
    payload_trimmed_at: m.trimmed_at,
    payload_erased_at: m.erased_at,
    deliveries: deliveries.items.reverse().map((d) => ({ ...d, attempt_history: attempts.rows.filter((a) => Number(a.delivery_id) === Number(d.id)) })),
  };
}
