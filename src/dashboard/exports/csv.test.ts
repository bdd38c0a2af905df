import { describe, expect, it } from 'vitest';
import { tableCsv } from './csv.js';
import { DEFAULT_LOCALE } from './locale.js';
import { TEKIL_BRAND, type Cell, type ExportTable } from './table.js';

async function csvOf(rows: Array<Record<string, Cell>>): Promise<string> {
  const table: ExportTable = {
    title: 't',
    brand: TEKIL_BRAND,
    locale: DEFAULT_LOCALE,
    filter: 'everything',
    period: 'all time',
    columns: [
      { key: 'id', header: 'id', width: 4 },
      { key: 'text', header: 'text', width: 10, notInReport: true },
      { key: 'at', header: 'at', width: 10 },
    ],
    rows: async function* () {
      yield* rows;
    },
  };
  let out = '';
  for await (const chunk of tableCsv(table)) out += chunk;
  return out;
}

describe('the CSV writer', () => {
  it('writes the column keys, then each row: every column (report-only flags aside), dates as ISO, nulls empty', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    expect(
      await csvOf([
        { id: 1, text: 'plain', at },
        { id: 2, text: null, at: null },
      ]),
    ).toBe('id,text,at\n1,plain,2026-01-02T03:04:05.678Z\n2,,\n');
  });

  it('quotes commas, quotes and line breaks', async () => {
    expect(await csvOf([{ id: 1, text: 'a,"b"\nc', at: null }])).toBe('id,text,at\n1,"a,""b""\nc",\n');
  });

  it('neutralises cells a spreadsheet would run as a formula', async () => {
    const cells = ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx'];
    const lines = (await csvOf(cells.map((text, id) => ({ id, text, at: null })))).split('\n');
    expect(lines.slice(1, 5)).toEqual(["0,'=1+1,", "1,'+1,", "2,'-1,", "3,'@SUM(A1),"]);
    expect(lines[5]).toBe("4,'\tx,");
    expect(lines.slice(6).join('\n')).toBe('5,"\'\rx",\n');
  });
});
