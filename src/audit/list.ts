import { decodeCursor, encodeCursor, invalidCursor } from '../cursor.js';
import type { Queryable } from '../store/db.js';
import { listAuditEvents, type AuditEventRow } from '../store/sql/audit/events.js';

export interface AuditFilter {
  actor?: string | undefined;
  /** A route template, as recorded: `/api/v1/endpoints/:id/rotate-secret`. */
  route?: string | undefined;
  method?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  outcome?: 'ok' | 'refused' | undefined;
}

/** An audit row as the API answers it: the stored row, its times as ISO text. */
export interface AuditEvent extends Omit<AuditEventRow, 'at' | 'last_at'> {
  at: string;
  last_at: string | null;
}

export const MAX_AUDIT_PAGE = 500;

function toEvent(row: AuditEventRow): AuditEvent {
  return { ...row, at: row.at.toISOString(), last_at: row.last_at?.toISOString() ?? null };
}

/** One page of the audit trail, newest first; `cursor` is the previous page's `next_cursor`. */
export async function listAudit(
  db: Queryable,
  filter: AuditFilter,
  limit: number,
  cursor?: string,
): Promise<{ items: AuditEvent[]; next_cursor: string | null }> {
  let before: string | null = null;
  if (cursor !== undefined) {
    [before] = decodeCursor(cursor, 1) as [string];
    if (!/^\d{1,18}$/.test(before)) throw invalidCursor('its key is not an audit row id');
  }
  const { rows } = await listAuditEvents.run(db, {
    actor: filter.actor ?? null,
    route: filter.route ?? null,
    method: filter.method ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
    outcome: filter.outcome ?? null,
    before,
    limit: limit + 1,
  });
  const items = rows.slice(0, limit).map(toEvent);
  return { items, next_cursor: rows.length > limit ? encodeCursor([items[items.length - 1]!.id]) : null };
}
