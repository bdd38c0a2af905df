import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { tableCsv } from '../dashboard/exports/csv.js';
import { inboxExportTable, outboxExportTable, type ExportTable } from '../dashboard/exports/table.js';
import type { Context } from '../service.js';
import { inboxFilterQuery, toFilter as toInboxFilter } from './inbox.js';
import { historyQuery, toFilter as toHistoryFilter } from './outbox.js';
import type { ApiRoutes } from './route-spec.js';

const formats = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pdf: 'application/pdf',
} as const;
type Format = keyof typeof formats;

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

/** Exports of the inbound and outbound lists, with the lists' own filters: CSV, Excel and a PDF report. */
export function exportRoutes(routes: ApiRoutes, ctx: Context): void {
  for (const format of Object.keys(formats) as Format[]) {
    routes.add(
      {
        method: 'GET',
        url: `/inbox/export.${format}`,
        tag: 'exports',
        summary: `Export inbound deliveries matching the filter as ${format.toUpperCase()}`,
        permission: 'view',
        query: inboxFilterQuery,
        produces: formats[format],
      },
      async ({ query }, _req, reply) => send(reply, ctx, inboxExportTable(ctx.db, toInboxFilter(query)), format, 'tekil-inbox'),
    );
    // The outbound CSV route predates these and lives with the outbox routes (same table, same writer).
    if (format === 'csv') continue;
    routes.add(
      {
        method: 'GET',
        url: `/deliveries/export.${format}`,
        tag: 'exports',
        summary: `Export outbound deliveries matching the filter as ${format.toUpperCase()}`,
        permission: 'view',
        tenant: true,
        query: historyQuery,
        produces: formats[format],
      },
      async ({ query, scope }, _req, reply) => {
        const list = toHistoryFilter(query, scope);
        const { cursor: _cursor, limit: _limit, ...filter } = list.filter;
        return send(reply, ctx, outboxExportTable(ctx.db, list.scope, filter), format, 'tekil-deliveries');
      },
    );
  }
}
