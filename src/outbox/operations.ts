import type { Queryable } from '../store/db.js';
import {
  INSERT_PING,
  LIVE_ENDPOINT_EXISTS,
  MESSAGE_EXISTS,
  NOTIFY_DISPATCHERS,
  REPLAY_FAILED,
  REPLAY_MESSAGE,
  REPLAY_TO_ENDPOINT,
} from '../store/sql/outbox/operations.js';
import { TekilError } from '../errors.js';
import { trimmedError } from '../retention/trimmed.js';
import { newEventId } from './ids.js';
import { buildEnvelope } from './publish.js';

/**
 * Operator actions on the outbox. A replay sends the stored bytes again under the same event id; the
 * delivery's ladder starts over and its attempt history continues.
 */

async function requireEndpoint(db: Queryable, endpointId: string): Promise<void> {
  const ep = await db.query(LIVE_ENDPOINT_EXISTS, [endpointId]);
  if (ep.rows.length === 0) throw new TekilError('NOT_FOUND', `no endpoint ${endpointId}`);
}

/** Replays one message to every destination it had, or to one endpoint (creating the delivery if needed). */
export async function replayMessage(db: Queryable, messageId: string, endpointId?: string): Promise<{ replayed: number }> {
  const msg = await db.query<{ trimmed_at: Date | null }>(MESSAGE_EXISTS, [messageId]);
  if (msg.rows.length === 0) throw new TekilError('NOT_FOUND', `no message ${messageId}`);
  const trimmedAt = msg.rows[0]!.trimmed_at;
  if (trimmedAt) throw trimmedError(`message ${messageId}`, trimmedAt);
  let replayed: number;
  if (endpointId) {
    await requireEndpoint(db, endpointId);
    replayed = (await db.query(REPLAY_TO_ENDPOINT, [messageId, endpointId])).rowCount;
  } else {
    replayed = (await db.query(REPLAY_MESSAGE, [messageId])).rowCount;
  }
  // Zero with a message that was kept a moment ago: the sweeper trimmed it in between.
  if (replayed === 0) {
    const now = (await db.query<{ trimmed_at: Date | null }>(MESSAGE_EXISTS, [messageId])).rows[0];
    if (now?.trimmed_at) throw trimmedError(`message ${messageId}`, now.trimmed_at);
  }
  await db.query(NOTIFY_DISPATCHERS);
  return { replayed };
}

export interface ReplayFailedFilter {
  endpointId?: string | undefined;
  /** Deliveries created at or after this time. */
  since?: Date | undefined;
  /** Deliveries created before this time. */
  until?: Date | undefined;
}

/** Replays every failed delivery matching the filter (bulk recovery after an endpoint outage). */
export async function replayFailed(db: Queryable, filter: ReplayFailedFilter): Promise<{ replayed: number }> {
  const res = await db.query(REPLAY_FAILED, [filter.endpointId ?? null, filter.since ?? null, filter.until ?? null]);
  await db.query(NOTIFY_DISPATCHERS);
  return { replayed: res.rowCount };
}

/** Sends a `test.ping` event to one endpoint only (no fan-out), through the normal signed path. */
export async function pingEndpoint(db: Queryable, endpointId: string): Promise<{ id: string }> {
  await requireEndpoint(db, endpointId);
  const id = newEventId();
  const payload = buildEnvelope(id, { type: 'test.ping', resourceId: endpointId, data: { endpoint_id: endpointId } }, new Date());
  await db.query(INSERT_PING, [id, endpointId, payload]);
  await db.query(NOTIFY_DISPATCHERS);
  return { id };
}
