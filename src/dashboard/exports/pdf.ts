import type { Readable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { cellText, type ExportTable } from './table.js';

/** A report is for reading: past this many rows it says how many more there are (the CSV has them all). */
export const PDF_MAX_ROWS = 2000;

const MARGIN = 36;
const FONT_SIZE = 7;

/**
 * A readable report: title, filter, period, totals by status, then the rows as a table. Totals count
 * every matching row, so they are written on the first page once all rows have been read (the pages
 * are buffered: at most PDF_MAX_ROWS rows of them).
 */
export function tablePdf(table: ExportTable, onError: (err: unknown) => void, now = new Date()): Readable {
  const doc = new PDFDocument({ size: 'A4', layout: 'landscape', margin: MARGIN, bufferPages: true, info: { Title: table.title } });
  const usable = doc.page.width - 2 * MARGIN;
  const columns = table.columns.filter((c) => !c.notInReport);
  const totalWidth = columns.reduce((n, c) => n + c.width, 0);
  const widths = columns.map((c) => (c.width / totalWidth) * usable);

  const line = (cells: string[], bold = false): void => {
    if (doc.y > doc.page.height - MARGIN - 20) doc.addPage();
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(FONT_SIZE);
    let x = MARGIN;
    for (const [i, text] of cells.entries()) {
      doc.text(text, x, y, { width: widths[i]! - 4, height: FONT_SIZE * 1.3, lineBreak: false, ellipsis: true });
      x += widths[i]!;
    }
    doc.x = MARGIN;
    doc.y = y + FONT_SIZE * 1.6;
  };

  doc.font('Helvetica-Bold').fontSize(14).text(table.title);
  doc.font('Helvetica').fontSize(9);
  doc.text(`Filter: ${table.filter}`);
  doc.text(`Period: ${table.period}`);
  doc.text(`Made: ${now.toISOString()}`);
  // Room for the totals, written once every row has been counted.
  const totalsY = doc.y + 4;
  doc.y = totalsY + 30;
  line(
    columns.map((c) => c.header),
    true,
  );

  void (async () => {
    const totals = new Map<string, number>();
    let count = 0;
    for await (const row of table.rows()) {
      count++;
      const status = cellText(row.status);
      totals.set(status, (totals.get(status) ?? 0) + 1);
      if (count <= PDF_MAX_ROWS) line(columns.map((c) => cellText(row[c.key])));
    }
    if (count > PDF_MAX_ROWS) {
      doc
        .moveDown()
        .font('Helvetica-Oblique')
        .fontSize(9)
        .text(`… and ${count - PDF_MAX_ROWS} more rows (export CSV or Excel for all of them).`);
    }
    if (count === 0) doc.moveDown().font('Helvetica-Oblique').fontSize(9).text('No rows match.');
    doc.switchToPage(0);
    const byStatus = [...totals]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([s, n]) => `${s} ${n}`)
      .join(', ');
    doc
      .font('Helvetica-Bold')
      .fontSize(9)
      .text(`Totals: ${count} rows${byStatus ? ` (${byStatus})` : ''}`, MARGIN, totalsY);
    doc.end();
  })().catch((err: unknown) => {
    onError(err);
    doc.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  return doc;
}
