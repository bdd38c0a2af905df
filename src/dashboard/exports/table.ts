import { listInbox } from '../../inbox/list.js';
import type { InboxFilter } from '../../inbox/filter.js';
import { listDeliveries, MAX_PAGE, type HistoryFilter } from '../../outbox/history.js';
import type { Queryable } from '../../store/db.js';
import type { Scope } from '../../scope.js';

export type Cell = string | number | Date | null;

export interface ExportColumn {
  key: string;
  header: string;
  /** Width in characters, for the spreadsheet and the report. */
  width: number;
  /** Left out of the PDF report (a page of A4 holds so many columns); CSV and Excel carry every column. */
  notInReport?: true;
}

/**
 * What every export format writes: a title, the filter as text, the columns and the rows, read page by
 * page from the store (never all at once) in the list's own order. `status` totals are counted by the
 * writers as the rows pass.
 */
export interface ExportTable {
  title: string;
  /** The filter in words (`status = dead, source = shop`), or `everything`. */
  filter: string;
  /** The period the filter asks for, in words (`since … until …`), or `all time`. */
  period: string;
  columns: readonly ExportColumn[];
  rows: () => AsyncGenerator<Record<string, Cell>>;
}

const PAGE = 1000;

function describeFilter(fields: Record<string, unknown>): string {
  const parts = Object.entries(fields)
    .filter(([k, v]) => v !== undefined && k !== 'since' && k !== 'until')
    .map(([k, v]) => `${k} = ${String(v)}`);
  return parts.length ? exportText(parts.join(', ')) : 'everything';
}

function describePeriod(since: Date | undefined, until: Date | undefined): string {
  if (!since && !until) return 'all time';
  return [since ? `from ${since.toISOString()}` : undefined, until ? `until ${until.toISOString()}` : undefined].filter(Boolean).join(' ');
}

const inboxColumns: readonly ExportColumn[] = [
  { key: 'received_at', header: 'received at', width: 24 },
  { key: 'source', header: 'source', width: 14 },
  { key: 'event_id', header: 'event id', width: 26 },
  { key: 'event_type', header: 'type', width: 18 },
  { key: 'resource_id', header: 'resource id', width: 18 },
  { key: 'status', header: 'status', width: 10 },
  { key: 'attempts', header: 'attempts', width: 8 },
  { key: 'processed_at', header: 'processed at', width: 24 },
  { key: 'last_error', header: 'last error', width: 40 },
  { key: 'erased_at', header: 'erased at', width: 24 },
];

/**
 * What XML 1.0 does not allow anywhere in a document: C0 controls other than tab, LF and CR, lone
 * surrogates, U+FFFE and U+FFFF. One of them in a cell made the whole .xlsx unreadable, and stored text
 * (an event type, an error) may hold any of them.
 */
const XML_FORBIDDEN = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text every export format can carry: each character XML forbids becomes U+FFFD (the replacement character). */
export function exportText(text: string): string {
  return text.replace(XML_FORBIDDEN, '\uFFFD');
}

/** A stored row with its text made safe for every format (the same cells in CSV, Excel and PDF). */
function exportRow(item: object): Record<string, Cell> {
  const row: Record<string, Cell> = {};
  for (const [key, value] of Object.entries(item)) row[key] = typeof value === 'string' ? exportText(value) : (value as Cell);
  return row;
}

/** Every row of a cursor-paged list, page after page, so an export never holds more than one page. */
async function* everyPage(
  page: (cursor: string | undefined) => Promise<{ items: readonly object[]; next_cursor: string | null }>,
): AsyncGenerator<Record<string, Cell>> {
  let cursor: string | undefined;
  do {
    const result = await page(cursor);
    for (const item of result.items) yield exportRow(item);
    cursor = result.next_cursor ?? undefined;
  } while (cursor);
}

export function inboxExportTable(db: Queryable, filter: InboxFilter): ExportTable {
  return {
    title: 'tekil: inbound deliveries',
    filter: describeFilter({
      status: filter.status,
      source: filter.source,
      type: filter.type,
      resource_id: filter.resourceId,
      event_id: filter.eventId,
      min_attempts: filter.minAttempts,
    }),
    period: describePeriod(filter.since, filter.until),
    columns: inboxColumns,
    rows: () => everyPage((cursor) => listInbox(db, filter, { limit: PAGE, cursor })),
  };
}

/** The outbound columns, in the order `GET /api/v1/deliveries/export.csv` has always written them. */
const outboxColumns: readonly ExportColumn[] = [
  { key: 'delivery_id', header: 'delivery id', width: 10 },
  { key: 'message_id', header: 'message id', width: 28 },
  { key: 'event_type', header: 'type', width: 18 },
  { key: 'resource_id', header: 'resource id', width: 18, notInReport: true },
  { key: 'endpoint_id', header: 'endpoint', width: 22 },
  { key: 'url', header: 'url', width: 32, notInReport: true },
  { key: 'status', header: 'status', width: 10 },
  { key: 'attempts', header: 'attempts', width: 8 },
  { key: 'last_status_code', header: 'HTTP', width: 6 },
  { key: 'last_duration_ms', header: 'ms', width: 7 },
  { key: 'last_error', header: 'last error', width: 40 },
  { key: 'created_at', header: 'created at', width: 24 },
  { key: 'last_attempt_at', header: 'last attempt at', width: 24, notInReport: true },
  { key: 'completed_at', header: 'completed at', width: 24, notInReport: true },
  { key: 'erased_at', header: 'erased at', width: 24 },
];

/** The scope's outbound deliveries matching the filter, every page. */
export function outboxExportTable(db: Queryable, scope: Scope, filter: Omit<HistoryFilter, 'cursor' | 'limit'>): ExportTable {
  return {
    title: 'tekil: outbound deliveries',
    filter: describeFilter({
      tenant_id: scope.tenantId,
      endpoint_id: filter.endpointId,
      status: filter.status,
      type: filter.type,
      resource_id: filter.resourceId,
    }),
    period: describePeriod(filter.since, filter.until),
    columns: outboxColumns,
    rows: () =>
      everyPage(async (cursor) => {
        const page = await listDeliveries(db, scope, { ...filter, cursor, limit: MAX_PAGE });
        return { ...page, items: page.items.map((d) => ({ ...d, delivery_id: d.id })) };
      }),
  };
}

/** A cell as text, as CSV and the report show it. */
export function cellText(v: Cell | undefined): string {
  if (v === null || v === undefined) return '';
  return v instanceof Date ? v.toISOString() : String(v);
}
