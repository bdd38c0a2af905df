import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { exportWord, zoneOffsetMinutes } from './locale.js';
import type { Cell, ExportTable } from './table.js';

/** How a time cell shows, by language: the same order as the panel and the portal (web/dates.js). */
const timeFormats = { en: 'yyyy-mm-dd hh:mm:ss', tr: 'dd.mm.yyyy hh:mm:ss' } as const;

/**
 * The table as an .xlsx, written with exceljs's streaming writer: each row is committed (serialised and
 * dropped) as it is read, without shared strings (which the writer would keep in memory), and reading
 * waits whenever the response is behind, so a million rows never sit in memory at once.
 *
 * A spreadsheet's date has no zone: with a language, a time is written as the wall-clock time of the
 * export's zone (which its header names), shown in the language's format; without one, in UTC as before.
 * The provider's name is the workbook's author, the title names it, and so does the printed page's
 * header (the streaming writer cannot place a picture: the logo is on the PDF report).
 */
export function tableXlsx(table: ExportTable, onError: (err: unknown) => void): Readable {
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: true });
  // The streaming writer writes the core properties only (author, title), not the company.
  workbook.creator = table.brand.name;
  workbook.lastModifiedBy = table.brand.name;
  workbook.title = table.title;
  const { lang, timeZone } = table.locale;
  const sheet = workbook.addWorksheet(exportWord('sheet', lang ?? 'en'), {
    headerFooter: { oddHeader: `&L${table.title.replace(/&/g, '&&')}${table.tenantName ? ` · ${table.tenantName.replace(/&/g, '&&')}` : ''}` },
  });
  sheet.columns = table.columns.map((c) => ({
    header: c.header,
    key: c.key,
    width: c.width,
    style: c.time && lang !== undefined ? { numFmt: timeFormats[lang] } : {},
  }));
  sheet.getRow(1).font = { bold: true };
  sheet.getRow(1).commit();
  const times = table.columns.filter((c) => c.time).map((c) => c.key);
  const wallClock = (row: Record<string, Cell>): Record<string, Cell> => {
    if (lang === undefined || timeZone === 'UTC') return row;
    const shifted = { ...row };
    for (const key of times) {
      const v = row[key];
      if (v instanceof Date) shifted[key] = new Date(v.getTime() + zoneOffsetMinutes(v, timeZone) * 60_000);
    }
    return shifted;
  };
  void (async () => {
    let n = 0;
    for await (const row of table.rows()) {
      sheet.addRow(wallClock(row)).commit();
      if (++n % 500 === 0 && out.writableNeedDrain) await once(out, 'drain');
    }
    sheet.commit();
    await workbook.commit();
  })().catch((err: unknown) => {
    onError(err);
    out.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  return out;
}
