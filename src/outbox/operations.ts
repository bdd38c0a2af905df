import type { Queryable } from '../store/db.js';
import { TekilError } from '../errors.js';
import { newEventId } from './ids.js';
import { OUTBOX_CHANNEL, buildEnvelope } from './publish.js';

/**
 * Operator actions on the outbox. A replay sends the stored bytes again under the same event id; the
 * delivery's ladder starts over and its attempt history continues.
 */
const NOTIFY = `SELECT pg_notify('${OUTBOX_CHANNEL}', '')`;

const RESET = `status = 'pending', next_attempt_at = now(), ladder_base = outbox_deliveries.attempts, lease = NULL, completed_at = NULL`;

/** Replays one message to every destination it had, or to one endpoint (creating the delivery if needed). */
export async function replayMessage(db: Queryable, messageId: string, endpointId?: string): Promise<{ replayed: number }> {
  const msg = await db.query('SELECT 1 FROM outbox_messages WHERE id = $1', [messageId]);
  if (msg.rows.length === 0) throw new TekilError('NOT_FOUND', `no message ${messageId}`);
  let replayed: number;
  if (endpointId) {
    const ep = await db.query('SELECT 1 FROM endpoints WHERE id = $1 AND deleted_at IS NULL', [endpointId]);
    if (ep.rows.length === 0) throw new TekilError('NOT_FOUND', `no endpoint ${endpointId}`);
    const res = await db.query(
      `INSERT INTO outbox_deliveries (message_id, endpoint_id) VALUES ($1, $2)
       ON CONFLICT (message_id, endpoint_id, (coalesce(url, ''))) DO UPDATE SET ${RESET}`,
      [messageId, endpointId],
    );
    replayed = res.rowCount;
  } else {
    const res = await db.query(
      `UPDATE outbox_deliveries SET ${RESET}
       WHERE message_id = $1 AND endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL)`,
      [messageId],
    );
    replayed = res.rowCount;
  }
  await db.query(NOTIFY);
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
  const res = await db.query(
    `UPDATE outbox_deliveries SET ${RESET}
     WHERE status = 'failed'
       AND ($1::text IS NULL OR endpoint_id = $1)
       AND ($2::timestamptz IS NULL OR created_at >= $2)
       AND ($3::timestamptz IS NULL OR created_at < $3)
       AND endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL)`,
    [filter.endpointId ?? null, filter.since ?? null, filter.until ?? null],
  );
  await db.query(NOTIFY);
  return { replayed: res.rowCount };
}

/** Sends a `test.ping` event to one endpoint only (no fan-out), through the normal signed path. */
export async function pingEndpoint(db: Queryable, endpointId: string): Promise<{ id: string }> {
  const ep = await db.query('SELECT 1 FROM endpoints WHERE id = $1 AND deleted_at IS NULL', [endpointId]);
  if (ep.rows.length === 0) throw new TekilError('NOT_FOUND', `no endpoint ${endpointId}`);
  const id = newEventId();
  const payload = buildEnvelope(id, { type: 'test.ping', resourceId: endpointId, data: { endpoint_id: endpointId } }, new Date());
  await db.query(
    `WITH msg AS (INSERT INTO outbox_messages (id, event_type, resource_id, payload) VALUES ($1, 'test.ping', $2, $3) RETURNING id)
     INSERT INTO outbox_deliveries (message_id, endpoint_id) SELECT id, $2 FROM msg`,
    [id, endpointId, payload],
  );
  await db.query(NOTIFY);
  return { id };
}
