import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tableCsv } from '../dashboard/exports/csv.js';
import { DEFAULT_LOCALE, exportLocaleFields, type ExportLocale } from '../dashboard/exports/locale.js';
import { logoLoader } from '../dashboard/exports/logo.js';
import { inboxExportTable, outboxExportTable, TEKIL_BRAND, type ExportBrand, type ExportTable } from '../dashboard/exports/table.js';
import { isTekilError } from '../errors.js';
import type { Context } from '../service.js';
import { getTenant } from '../tenants/tenants.js';
import { inboxFilterQuery, toFilter as toInboxFilter } from './inbox.js';
import { historyQuery, toFilter as toHistoryFilter } from './outbox.js';
import type { ApiRoutes } from './route-spec.js';

const formats = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pdf: 'application/pdf',
} as const;
type Format = keyof typeof formats;

/** A list's filter, with the export's language (`lang=tr`) and time zone (`tz=Europe/Istanbul`). */
const inboxExportQuery = inboxFilterQuery.extend(exportLocaleFields).strict();
const outboxExportQuery = historyQuery.extend(exportLocaleFields).strict();

const localeOf = (q: { lang?: 'en' | 'tr' | undefined; tz?: string | undefined }): ExportLocale => ({
  lang: q.lang ?? DEFAULT_LOCALE.lang,
  timeZone: q.tz ?? DEFAULT_LOCALE.timeZone,
});

/**
 * The Excel and PDF writers are loaded on the first export: exceljs and pdfkit together took about half
 * a second of every tekil process's start-up (each CLI command's too), and most processes never export.
 */
async function exportBody(table: ExportTable, format: Format, onError: (err: unknown) => void): Promise<Readable> {
  if (format === 'csv') return Readable.from(tableCsv(table));
  if (format === 'xlsx') return (await import('../dashboard/exports/xlsx.js')).tableXlsx(table, onError);
  return (await import('../dashboard/exports/pdf.js')).tablePdf(table, onError);
}

export async function send(reply: FastifyReply, ctx: Context, table: ExportTable, format: Format, name: string): Promise<FastifyReply> {
  // Headers are sent before the first row is read: a failure mid-way can only cut the download short.
  const onError = (err: unknown) => ctx.logger.warn({ err, format }, 'export failed part-way');
  const body = await exportBody(table, format, onError);
  reply.header('content-type', formats[format]);
  reply.header('content-disposition', `attachment; filename="${name}.${format}"`);
  reply.header('cache-control', 'no-store');
  return reply.send(body);
}

/** A tenant's name for its export; its id when it has none (a filter naming a tenant that is gone). */
async function tenantName(ctx: Context, id: string): Promise<string> {
  try {
    return (await getTenant(ctx.db, id)).name || id;
  } catch (err) {
    if (isTekilError(err, 'TENANT_NOT_FOUND')) return id;
    throw err;
  }
}

/**
 * Exports of the inbound and outbound lists, with the lists' own filters: CSV, Excel and a PDF report,
 * in the language and time zone asked (docs/portal.md, docs/dashboard.md). A tenant's own caller (the
 * merchant portal, a tenant token) gets the provider's brand (`portal.name`, `portal.logo_url`).
 */
export function exportRoutes(routes: ApiRoutes, ctx: Context): void {
  const logo = logoLoader({ url: ctx.config.portal.logo_url, logger: ctx.logger });
  const brandOf = async (req: FastifyRequest, format: Format): Promise<ExportBrand> => {
    const name = ctx.config.portal.name;
    if (req.caller?.tenantId === undefined || name === undefined) return TEKIL_BRAND;
    return { name, logo: format === 'pdf' ? await logo() : undefined };
  };
  for (const format of Object.keys(formats) as Format[]) {
    routes.add(
      {
        method: 'GET',
        url: `/inbox/export.${format}`,
        tag: 'exports',
        summary: `Export inbound deliveries matching the filter as ${format.toUpperCase()}`,
        permission: 'view',
        query: inboxExportQuery,
        produces: formats[format],
      },
      async ({ query }, _req, reply) => {
        const { lang, tz, ...filter } = query;
        const view = { brand: TEKIL_BRAND, locale: localeOf({ lang, tz }) };
        return send(reply, ctx, inboxExportTable(ctx.db, toInboxFilter(filter), view), format, 'tekil-inbox');
      },
    );
    routes.add(
      {
        method: 'GET',
        url: `/deliveries/export.${format}`,
        tag: 'exports',
        summary: `Export outbound deliveries matching the filter as ${format.toUpperCase()}`,
        permission: 'view',
        tenant: true,
        query: outboxExportQuery,
        produces: formats[format],
      },
      async ({ query, scope }, req, reply) => {
        const { lang, tz, ...history } = query;
        const list = toHistoryFilter(history, scope);
        const { cursor: _cursor, limit: _limit, ...filter } = list.filter;
        const brand = await brandOf(req, format);
        const name = list.scope.tenantId === undefined ? undefined : await tenantName(ctx, list.scope.tenantId);
        const view = { brand, locale: localeOf({ lang, tz }), tenantName: name };
        return send(reply, ctx, outboxExportTable(ctx.db, list.scope, filter, view), format, 'tekil-deliveries');
      },
    );
  }
}
