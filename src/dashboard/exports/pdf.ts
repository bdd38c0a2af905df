import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { exportWord, exportWords, zoneLabel } from './locale.js';
import { cellText, timeText, type ExportTable } from './table.js';

/** A report is for reading: past this many rows it says how many more there are (the CSV has them all). */
export const PDF_MAX_ROWS = 2000;

const MARGIN = 36;
const FONT_SIZE = 7;
const LOGO_HEIGHT = 32;
const MAX_CELL_LINES = 3;

/** Where DejaVu is found: the npm package (a dependency), else the system's (Debian's fonts-dejavu-core). */
function dejavuDirs(): string[] {
  const dirs: string[] = [];
  try {
    dirs.push(join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf'));
  } catch {
    // not installed (a trimmed image): the system's fonts, if any
  }
  dirs.push('/usr/share/fonts/truetype/dejavu');
  return dirs;
}

type ReportFonts = { regular: Buffer | string; bold: Buffer | string; oblique: Buffer | string };
/** PDF's own fonts: no ğ, ş, ı, İ; only when DejaVu cannot be found anywhere. */
const BUILT_IN: ReportFonts = { regular: 'Helvetica', bold: 'Helvetica-Bold', oblique: 'Helvetica-Oblique' };
let fonts: ReportFonts | undefined;

/**
 * The report's fonts: DejaVu Sans Condensed, embedded (subset). The PDF's built-in Helvetica has no
 * ğ, ş, ı, İ: a Turkish report written with it loses letters. Read once, on the first report.
 */
function reportFonts(onError: (err: unknown) => void): ReportFonts {
  if (fonts) return fonts;
  for (const dir of dejavuDirs()) {
    try {
      fonts = {
        regular: readFileSync(join(dir, 'DejaVuSansCondensed.ttf')),
        bold: readFileSync(join(dir, 'DejaVuSansCondensed-Bold.ttf')),
        oblique: readFileSync(join(dir, 'DejaVuSansCondensed-Oblique.ttf')),
      };
      return fonts;
    } catch {
      // the next place
    }
  }
  onError(new Error('DejaVu fonts not found (npm package dejavu-fonts-ttf): reports use Helvetica, which has no Turkish ğ ş ı İ'));
  fonts = BUILT_IN;
  return fonts;
}

/**
 * A readable report: the brand (the provider's logo and name on a tenant's export), title, the tenant,
 * filter, period, time zone, totals by status, then the rows as a table, all in the export's language.
 * Totals count every matching row, so they are written on the first page once all rows have been read
 * (the pages are buffered: at most PDF_MAX_ROWS rows of them).
 */
export function tablePdf(table: ExportTable, onError: (err: unknown) => void, now = new Date()): Readable {
  const lang = table.locale.lang ?? 'en';
  const word = (key: string) => exportWord(key, lang);
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margin: MARGIN,
    bufferPages: true,
    lang: lang === 'tr' ? 'tr-TR' : 'en',
    info: { Title: table.title, Author: table.brand.name, Creator: table.brand.name },
  });
  const font = reportFonts(onError);
  for (const [name, source] of Object.entries(font)) doc.registerFont(name, source);
  const usable = doc.page.width - 2 * MARGIN;
  const columns = table.columns.filter((c) => !c.notInReport);
  const totalWidth = columns.reduce((n, c) => n + c.width, 0);
  const widths = columns.map((c) => (c.width / totalWidth) * usable);

  // A cell wraps (a target URL, an error) up to three lines; a row is as tall as its tallest cell.
  const lineHeight = FONT_SIZE * 1.25;
  const line = (cells: string[], bold = false): void => {
    doc.font(bold ? 'bold' : 'regular').fontSize(FONT_SIZE);
    const height = Math.max(
      lineHeight,
      ...cells.map((text, i) => Math.min(MAX_CELL_LINES * lineHeight, doc.heightOfString(text, { width: widths[i]! - 4, lineGap: 0 }))),
    );
    if (doc.y + height > doc.page.height - MARGIN - 20) doc.addPage();
    const y = doc.y;
    let x = MARGIN;
    for (const [i, text] of cells.entries()) {
      doc.text(text, x, y, { width: widths[i]! - 4, height, ellipsis: true, lineGap: 0 });
      x += widths[i]!;
    }
    doc.x = MARGIN;
    doc.y = y + height + FONT_SIZE * 0.5;
  };

  if (table.brand.logo) {
    try {
      doc.image(table.brand.logo, MARGIN, MARGIN, { fit: [LOGO_HEIGHT * 4, LOGO_HEIGHT] });
      doc.y = MARGIN + LOGO_HEIGHT + 6;
    } catch (err) {
      // Bytes pdfkit cannot read (src/dashboard/exports/logo.ts lets only PNG and JPEG through): the name says it.
      onError(err);
    }
  }
  doc.x = MARGIN;
  doc.font('bold').fontSize(14).text(table.title);
  doc.font('regular').fontSize(9);
  if (table.tenantName !== undefined) doc.text(`${word('tenant')}: ${table.tenantName}`);
  doc.text(`${word('filter')}: ${table.filter}`);
  doc.text(`${word('period')}: ${table.period}`);
  if (table.locale.lang !== undefined) doc.text(`${word('timeZone')}: ${zoneLabel(table.locale.timeZone, now)}`);
  doc.text(`${word('made')}: ${timeText(now, table.locale)}`);
  // Room for the totals, written once every row has been counted.
  const totalsY = doc.y + 4;
  doc.y = totalsY + 30;
  line(
    columns.map((c) => c.label ?? c.header),
    true,
  );

  void (async () => {
    const totals = new Map<string, number>();
    let count = 0;
    for await (const row of table.rows()) {
      count++;
      const status = cellText(row.status);
      totals.set(status, (totals.get(status) ?? 0) + 1);
      if (count <= PDF_MAX_ROWS) line(columns.map((c) => cellText(row[c.key], table.locale)));
    }
    if (count > PDF_MAX_ROWS) {
      doc
        .moveDown()
        .font('oblique')
        .fontSize(9)
        .text(exportWords[lang].moreRows(count - PDF_MAX_ROWS));
    }
    if (count === 0) doc.moveDown().font('oblique').fontSize(9).text(word('noRows'));
    doc.switchToPage(0);
    const byStatus = [...totals]
      .sort(([a], [b]) => a.localeCompare(b, lang))
      .map(([s, n]) => `${s} ${n}`)
      .join(', ');
    doc
      .font('bold')
      .fontSize(9)
      .text(`${word('totals')}: ${count} ${word('rows')}${byStatus ? ` (${byStatus})` : ''}`, MARGIN, totalsY);
    doc.end();
  })().catch((err: unknown) => {
    onError(err);
    doc.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  return doc;
}
