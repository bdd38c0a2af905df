import { listInbox } from '../../inbox/list.js';
import type { InboxFilter } from '../../inbox/filter.js';
import { listDeliveries, MAX_PAGE, type HistoryFilter } from '../../outbox/history.js';
import type { Queryable } from '../../store/db.js';
import type { Scope } from '../../scope.js';
import { DEFAULT_LOCALE, exportWord, formatTime, statusText, zoneLabel, type ExportLocale, type ExportWord } from './locale.js';

export type Cell = string | number | Date | null;

export interface ExportColumn {
  key: string;
  header: string;
  /** Width in characters, for the spreadsheet and the report. */
  width: number;
  /** Left out of the PDF report (a page of A4 holds so many columns); CSV and Excel carry every column. */
  notInReport?: true;
  /** A time: written in the export's zone and language, and its header names the zone. */
  time?: true;
  /** The header without the zone, for the report (which states the zone once, above the table). */
  label?: string;
}

/** Whose export it is: the provider's, for a tenant's own caller (the portal); tekil's otherwise. */
export interface ExportBrand {
  name: string;
  /** The provider's logo (PNG or JPEG bytes), shown on the PDF report. */
  logo?: Buffer | undefined;
}

export const TEKIL_BRAND: ExportBrand = { name: 'tekil' };

/** Who and how, beside the filter: the brand, the tenant's name, the language and zone. */
export interface ExportView {
  brand: ExportBrand;
  locale: ExportLocale;
  /** The tenant's name when the export is one tenant's (never its internal id). */
  tenantName?: string | undefined;
}

const DEFAULT_VIEW: ExportView = { brand: TEKIL_BRAND, locale: DEFAULT_LOCALE };

/**
 * What every export format writes: a title, the filter as text, the columns and the rows, read page by
 * page from the store (never all at once) in the list's own order. `status` totals are counted by the
 * writers as the rows pass. Headers, status values and labels are already in the export's language.
 */
export interface ExportTable extends ExportView {
  title: string;
  /** The filter in words (`status = dead, source = shop`), or `everything`. */
  filter: string;
  /** The period the filter asks for, in words (`since … until …`), or `all time`. */
  period: string;
  columns: readonly ExportColumn[];
  rows: () => AsyncGenerator<Record<string, Cell>>;
}

const PAGE = 1000;

/** A word of the export's language (English when none was asked). */
const wordOf = (view: ExportView, key: ExportWord | string): string => exportWord(key, view.locale.lang ?? 'en');

/** A time as text: ISO 8601 in UTC without a language (the API's form), else the language's format in the zone. */
export function timeText(d: Date, locale: ExportLocale): string {
  return locale.lang === undefined ? d.toISOString() : formatTime(d, locale.lang, locale.timeZone);
}

function describeFilter(view: ExportView, fields: Record<string, unknown>): string {
  const { lang } = view.locale;
  const parts = Object.entries(fields)
    .filter(([k, v]) => v !== undefined && k !== 'since' && k !== 'until')
    .map(([k, v]) => {
      const value = k === 'status' && lang ? statusText(String(v), lang) : String(v);
      return lang ? `${wordOf(view, k)} = ${value}` : `${k} = ${value}`;
    });
  return parts.length ? exportText(parts.join(', ')) : wordOf(view, 'everything');
}

function describePeriod(view: ExportView, since: Date | undefined, until: Date | undefined): string {
  if (!since && !until) return wordOf(view, 'allTime');
  return [
    since ? `${wordOf(view, 'from')} ${timeText(since, view.locale)}` : undefined,
    until ? `${wordOf(view, 'until')} ${timeText(until, view.locale)}` : undefined,
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * The columns in the export's language. With a language, a time's header names the zone its cells are
 * in (`created (Europe/Istanbul (UTC+03:00))`); the column keys stay the same.
 */
function localColumns(view: ExportView, columns: readonly ExportColumn[]): ExportColumn[] {
  const { lang, timeZone } = view.locale;
  return columns.map((c) => {
    const header = wordOf(view, c.key);
    return { ...c, label: header, header: lang !== undefined && c.time ? `${header} (${zoneLabel(timeZone, new Date())})` : header };
  });
}

const inboxColumns: readonly ExportColumn[] = [
  { key: 'received_at', header: 'received at', width: 24, time: true },
  { key: 'source', header: 'source', width: 14 },
  { key: 'event_id', header: 'event id', width: 26 },
  { key: 'event_type', header: 'type', width: 18 },
  { key: 'resource_id', header: 'resource id', width: 18 },
  { key: 'status', header: 'status', width: 10 },
  { key: 'attempts', header: 'attempts', width: 8 },
  { key: 'processed_at', header: 'processed at', width: 24, time: true },
  { key: 'last_error', header: 'last error', width: 40 },
  { key: 'erased_at', header: 'erased at', width: 20, time: true },
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

/** A stored row with its text made safe for every format (the same cells in CSV, Excel and PDF), its status in the language. */
function exportRow(item: object, locale: ExportLocale): Record<string, Cell> {
  const row: Record<string, Cell> = {};
  for (const [key, value] of Object.entries(item)) row[key] = typeof value === 'string' ? exportText(value) : (value as Cell);
  if (locale.lang !== undefined && typeof row.status === 'string') row.status = statusText(row.status, locale.lang);
  return row;
}

/** Every row of a cursor-paged list, page after page, so an export never holds more than one page. */
async function* everyPage(
  locale: ExportLocale,
  page: (cursor: string | undefined) => Promise<{ items: readonly object[]; next_cursor: string | null }>,
): AsyncGenerator<Record<string, Cell>> {
  let cursor: string | undefined;
  do {
    const result = await page(cursor);
    for (const item of result.items) yield exportRow(item, locale);
    cursor = result.next_cursor ?? undefined;
  } while (cursor);
}

export function inboxExportTable(db: Queryable, filter: InboxFilter, view: ExportView = DEFAULT_VIEW): ExportTable {
  return {
    ...view,
    title: `${view.brand.name}: ${wordOf(view, 'inboundTitle')}`,
    filter: describeFilter(view, {
      status: filter.status,
      source: filter.source,
      type: filter.type,
      resource_id: filter.resourceId,
      event_id: filter.eventId,
      min_attempts: filter.minAttempts,
    }),
    period: describePeriod(view, filter.since, filter.until),
    columns: localColumns(view, inboxColumns),
    rows: () => everyPage(view.locale, (cursor) => listInbox(db, filter, { limit: PAGE, cursor })),
  };
}

/**
 * The outbound columns, in the order `GET /api/v1/deliveries/export.csv` has always written them, then
 * the next attempt. The report (PDF) carries every column of the portal's Webhooks page: created, event
 * type, target URL, attempts, status, HTTP code, response time, error, next attempt, with the message id.
 */
const outboxColumns: readonly ExportColumn[] = [
  { key: 'delivery_id', header: 'delivery id', width: 10, notInReport: true },
  { key: 'message_id', header: 'message id', width: 20 },
  { key: 'event_type', header: 'type', width: 19 },
  { key: 'resource_id', header: 'resource id', width: 18, notInReport: true },
  { key: 'endpoint_id', header: 'endpoint', width: 22, notInReport: true },
  { key: 'url', header: 'url', width: 38 },
  { key: 'status', header: 'status', width: 11 },
  { key: 'attempts', header: 'attempts', width: 9 },
  { key: 'last_status_code', header: 'HTTP', width: 10 },
  { key: 'last_duration_ms', header: 'ms', width: 13 },
  { key: 'last_error', header: 'last error', width: 26 },
  { key: 'created_at', header: 'created at', width: 20, time: true },
  { key: 'last_attempt_at', header: 'last attempt at', width: 20, notInReport: true, time: true },
  { key: 'completed_at', header: 'completed at', width: 20, notInReport: true, time: true },
  { key: 'next_attempt_at', header: 'next attempt at', width: 20, time: true },
  { key: 'erased_at', header: 'erased at', width: 20, time: true },
];

/** The scope's outbound deliveries matching the filter, every page. A tenant is named by its name, not its id. */
export function outboxExportTable(db: Queryable, scope: Scope, filter: Omit<HistoryFilter, 'cursor' | 'limit'>, view: ExportView = DEFAULT_VIEW): ExportTable {
  return {
    ...view,
    title: `${view.brand.name}: ${wordOf(view, 'outboundTitle')}`,
    filter: describeFilter(view, {
      // A tenant's name is the export's own line (the tenant); its id is said only when no name is known.
      tenant_id: view.tenantName === undefined ? scope.tenantId : undefined,
      endpoint_id: filter.endpointId,
      status: filter.status,
      type: filter.type,
      resource_id: filter.resourceId,
    }),
    period: describePeriod(view, filter.since, filter.until),
    columns: localColumns(view, outboxColumns),
    rows: () =>
      everyPage(view.locale, async (cursor) => {
        const page = await listDeliveries(db, scope, { ...filter, cursor, limit: MAX_PAGE });
        // A next attempt only while one is coming, as the Webhooks page shows it.
        const items = page.items.map((d) => ({
          ...d,
          delivery_id: d.id,
          next_attempt_at: d.status === 'pending' || d.status === 'sending' ? d.next_attempt_at : null,
        }));
        return { ...page, items };
      }),
  };
}

/** A cell as text, as CSV and the report show it. */
export function cellText(v: Cell | undefined, locale: ExportLocale = DEFAULT_LOCALE): string {
  if (v === null || v === undefined) return '';
  return v instanceof Date ? timeText(v, locale) : String(v);
}
