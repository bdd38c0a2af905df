import { DEFAULT_LOCALE } from '../dashboard/exports/locale.js';
import { exportText, TEKIL_BRAND, type Cell, type ExportColumn, type ExportTable } from '../dashboard/exports/table.js';
import { listAudit, MAX_AUDIT_PAGE, type AuditFilter } from '../audit/list.js';
import type { Queryable } from '../store/db.js';

// The audit trail's CSV and Excel table: here, beside the routes that serve it, because the export
// writers belong to dashboard/, which the audit room below it does not use.

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
  { key: 'count', header: 'count', width: 6 },
  { key: 'last_at', header: 'last_at', width: 24 },
];

function describe(filter: AuditFilter): { filter: string; period: string } {
  const parts = (['actor', 'route', 'method', 'outcome'] as const).filter((k) => filter[k] !== undefined).map((k) => `${k} = ${filter[k]}`);
  const period = [filter.since ? `from ${filter.since.toISOString()}` : undefined, filter.until ? `until ${filter.until.toISOString()}` : undefined]
    .filter(Boolean)
    .join(' ');
  return { filter: parts.length ? exportText(parts.join(', ')) : 'everything', period: period || 'all time' };
}

/** The audit trail as an export table (CSV, Excel), read a page at a time, newest first. */
export function auditExportTable(db: Queryable, filter: AuditFilter): ExportTable {
  return {
    title: 'tekil audit trail',
    brand: TEKIL_BRAND,
    locale: DEFAULT_LOCALE,
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
