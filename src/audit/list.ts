import { decodeCursor, encodeCursor, invalidCursor } from '../cursor.js';
import { exportText, type Cell, type ExportColumn, type ExportTable } from '../dashboard/exports/table.js';
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

export interface AuditEvent {
  id: string;
  at: string;
  actor: string;
  role: string | null;
  tenant_id: string | null;
  address: string | null;
  method: string;
  route: string;
  target: Record<string, unknown>;
  status: number;
  error_code: string | null;
}

export const MAX_AUDIT_PAGE = 500;

function toEvent(row: AuditEventRow): AuditEvent {
  return { ...row, at: row.at.toISOString() };
}

/** One page of the audit trail, newest first; `cursor` is the previous page's `next_cursor`. */
export async function listAudit(db: Queryable, filter: AuditFilter, limit: number, cursor?: string): Promise<{ items: AuditEvent[]; next_cursor: string | null }> {
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

const auditColumns: readonly ExportColumn[] = [
  { key: 'at', header: 'at', width: 24 },
  { key: 'actor', header: 'actor', width: 16 },
  { key: 'role', header: 'role', width: 9 },
  { key: 'address', header: 'address', width: 16 },
  { key: 'method', header: 'method', width: 7 },
  { key: 'route', header: 'route', width: 36 },
  { key: 'target', header: 'target', width: 40 },
  { key: 'status', header: 'status', width: 6 },
  { key: 'error_code', header: 'error', width: 20 },
];

function describe(filter: AuditFilter): { filter: string; period: string } {
  const parts = (['actor', 'route', 'method', 'outcome'] as const).filter((k) => filter[k] !== undefined).map((k) => `${k} = ${filter[k]}`);
  const period = [filter.since ? `from ${filter.since.toISOString()}` : undefined, filter.until ? `until ${filter.until.toISOString()}` : undefined].filter(Boolean).join(' ');
  return { filter: parts.length ? exportText(parts.join(', ')) : 'everything', period: period || 'all time' };
}

/** The audit trail as an export table (CSV, Excel), read a page at a time, newest first. */
export function auditExportTable(db: Queryable, filter: AuditFilter): ExportTable {
  return {
    title: 'tekil audit trail',
    ...describe(filter),
    columns: auditColumns,
    async *rows() {
      let cursor: string | undefined;
      do {
        const page = await listAudit(db, filter, MAX_AUDIT_PAGE, cursor);
        for (const e of page.items) {
          const row: Record<string, Cell> = { ...e, target: JSON.stringify(e.target) };
          for (const [k, v] of Object.entries(row)) if (typeof v === 'string') row[k] = exportText(v);
          yield row;
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
    },
  };
}
