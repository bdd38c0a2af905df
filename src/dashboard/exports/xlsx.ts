import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import type { ExportTable } from './table.js';

/**
 * The table as an .xlsx, written with exceljs's streaming writer: each row is committed (serialised and
 * dropped) as it is read, without shared strings (which the writer would keep in memory), and reading
 * waits whenever the response is behind, so a million rows never sit in memory at once.
 */
export function tableXlsx(table: ExportTable, onError: (err: unknown) => void): Readable {
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: true });
  const sheet = workbook.addWorksheet('deliveries');
  sheet.columns = table.columns.map((c) => ({ header: c.header, key: c.key, width: c.width }));
  sheet.getRow(1).font = { bold: true };
  sheet.getRow(1).commit();
  void (async () => {
    let n = 0;
    for await (const row of table.rows()) {
      sheet.addRow(row).commit();
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
