import { cellText, type ExportTable } from './table.js';

/** Quoted when needed; a leading = + - @ is neutralised so spreadsheets do not run it as a formula. */
function csvCell(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * The table as CSV, a chunk per page of rows. Without a language the header row is the column keys
 * (what scripts read); with one, the headers in that language, times' headers naming their zone, and a
 * byte order mark first so a spreadsheet reads the Turkish letters as UTF-8.
 */
export async function* tableCsv(table: ExportTable): AsyncGenerator<string> {
  const localised = table.locale.lang !== undefined;
  const header = table.columns.map((c) => csvCell(localised ? c.header : c.key)).join(',');
  yield `${localised ? '\uFEFF' : ''}${header}\n`;
  let chunk = '';
  for await (const row of table.rows()) {
    chunk += `${table.columns.map((c) => csvCell(cellText(row[c.key], table.locale))).join(',')}\n`;
    if (chunk.length > 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}
