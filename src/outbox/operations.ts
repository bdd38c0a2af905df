import type { Queryable } from '../store/db.js';
import {
  insertPing,
  liveEndpointExists,
  messageExists,
  notifyDispatchers,
  replayFailed as replayFailedStatement,
  replayMessage as replayMessageStatement,
  replayToEndpoint,
} from '../store/sql/outbox/operations.js';
import { TekilError } from '../errors.js';
import { erasedError, trimmedError } from '../retention/trimmed.js';
import { scopeTenantId, type Scope } from '../scope.js';
import { newEventId } from './ids.js';
import { buildEnvelope } from './publish.js';

/**
 * Operator actions on the outbox. A replay sends the stored bytes again under the same event id; the
 * delivery's ladder starts over and its attempt history continues.
 */

async function requireEndpoint(db: Queryable, endpointId: string): Promise<void> {
  const ep = await liveEndpointExists.run(db, { endpointId });
  if (ep.rows.length === 0) throw new TekilError('NOT_FOUND', `no endpoint ${endpointId}`);
}

/** Replays one message to every destination it had, or to one endpoint (creating the delivery if needed). */
export async function replayMessage(db: Queryable, messageId: string, endpointId?: string): Promise<{ replayed: number }> {
  const msg = await messageExists.run(db, { messageId });
  if (msg.rows.length === 0) throw new TekilError('NOT_FOUND', `no message ${messageId}`);
  const { tenant_id: tenantId, trimmed_at: trimmedAt, erased_at: erasedAt } = msg.rows[0]!;
  if (erasedAt) throw erasedError(`message ${messageId}`, erasedAt);
  if (trimmedAt) throw trimmedError(`message ${messageId}`, trimmedAt);
  let replayed: number;
  if (endpointId) {
    await requireEndpoint(db, endpointId);
    replayed = (await replayToEndpoint.run(db, { tenantId, messageId, endpointId })).rowCount;
  } else {
    replayed = (await replayMessageStatement.run(db, { tenantId, messageId })).rowCount;
  }
  // Zero with a message that was kept a moment ago: the sweeper trimmed it in between; else an endpoint
  // named that is not the message's tenant's (a message is only ever sent to its own tenant's endpoints).
  if (replayed === 0) {
    const now = (await messageExists.run(db, { messageId })).rows[0];
    if (!now) throw new TekilError('NOT_FOUND', `no message ${messageId}`);
    if (now.erased_at) throw erasedError(`message ${messageId}`, now.erased_at);
    if (now.trimmed_at) throw trimmedError(`message ${messageId}`, now.trimmed_at);
    if (endpointId) throw new TekilError('VALIDATION_FAILED', `endpoint ${endpointId} is not an endpoint of message ${messageId}'s tenant`);
  }
  await notifyDispatchers.run(db);
  return { replayed };
}

export interface ReplayFailedFilter {
  endpointId?: string | undefined;
  /** Deliveries created at or after this time. */
  since?: Date | undefined;
  /** Deliveries created before this time. */
  until?: Date | undefined;
}

/** Replays every failed delivery of the scope matching the filter (bulk recovery after an endpoint outage). */
export async function replayFailed(db: Queryable, scope: Scope, filter: ReplayFailedFilter): Promise<{ replayed: number }> {
  const res = await replayFailedStatement.run(db, {
    endpointId: filter.endpointId ?? null,
    tenantId: scopeTenantId(scope),
    since: filter.since ?? null,
    until: filter.until ?? null,
  });
  await notifyDispatchers.run(db);
  return { replayed: res.rowCount };
}

/** Sends a `test.ping` event to one endpoint only (no fan-out), through the normal signed path. */
export async function pingEndpoint(db: Queryable, endpointId: string): Promise<{ id: string }> {
  await requireEndpoint(db, endpointId);
  const id = newEventId();
  const payload = buildEnvelope(id, { type: 'test.ping', resourceId: endpointId, data: { endpoint_id: endpointId } }, new Date());
  await insertPing.run(db, { id, endpointId, payload });
  await notifyDispatchers.run(db);
  return { id };
}
