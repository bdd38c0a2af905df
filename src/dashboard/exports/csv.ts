import { cellText, type ExportTable } from './table.js';

/** Quoted when needed; a leading = + - @ is neutralised so spreadsheets do not run it as a formula. */
function csvCell(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The table as CSV, a chunk per page of rows. */
export async function* tableCsv(table: ExportTable): AsyncGenerator<string> {
  yield `${table.columns.map((c) => c.key).join(',')}\n`;
  let chunk = '';
  for await (const row of table.rows()) {
    chunk += `${table.columns.map((c) => csvCell(cellText(row[c.key]))).join(',')}\n`;
    if (chunk.length > 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}
