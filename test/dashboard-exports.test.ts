import type { FastifyInstance } from 'fastify';
import ExcelJS from 'exceljs';
import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { PDF_MAX_ROWS } from '../src/dashboard/exports/pdf.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';

const ADMIN = 'dashboard-exports-admin';
/** More than one page of the list (1,000), and more than the PDF shows. */
const ROWS = 2300;
const DEAD = 7;

const download = async (app: FastifyInstance, url: string) => {
  const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${ADMIN}` } });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return res;
};

describe('exports of the inbound list: CSV, Excel, PDF, with the list filters', () => {
  let t: TestDb;
  let app: FastifyInstance;

  beforeAll(async () => {
    t = await createTestDb();
    app = await buildApp({ ctx: testContext(t.db, workerTestConfig()), roles: new Set(['api']), adminToken: ADMIN });
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, received_at)
       SELECT $1, 'evt_x' || lpad(i::text, 5, '0'), 'inv_' || i, 'invoice.paid', '\\x7b7d', now() - i * interval '1 second'
       FROM generate_series(1, $2::int) AS i`,
      [SOURCE, ROWS],
    );
    // A few in the review queue, one with an error that looks like a spreadsheet formula.
    await t.db.query(`UPDATE inbox_deliveries SET status = 'dead', attempts = 3, last_error = '=HYPERLINK("x")' WHERE event_id <= 'evt_x0000${DEAD}'`);
    await t.db.query(`UPDATE inbox_queue SET dead = true WHERE event_id <= 'evt_x0000${DEAD}'`);
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('CSV has every matching row across pages, formulas neutralised', async () => {
    const all = (await download(app, `/api/v1/inbox/export.csv?source=${SOURCE}`)).body.trim().split('\n');
    expect(all).toHaveLength(ROWS + 1);
    expect(all[0]).toMatch(/^received_at,source,event_id,/);
    const dead = (await download(app, '/api/v1/inbox/export.csv?status=dead')).body.trim().split('\n');
    expect(dead).toHaveLength(DEAD + 1);
    expect(dead[1]).toContain(`"'=HYPERLINK(""x"")"`);
  });

  it('Excel opens with the library: a header row and every matching row, values as cells', async () => {
    const res = await download(app, `/api/v1/inbox/export.xlsx?source=${SOURCE}`);
    expect(res.headers['content-type']).toMatch(/spreadsheetml/);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(ROWS + 1);
    expect(sheet.getRow(1).getCell(3).value).toBe('event id');
    // Newest first: the row received 1 s ago is the first data row.
    expect(sheet.getRow(2).getCell(3).value).toBe('evt_x00001');
    expect(sheet.getRow(2).getCell(6).value).toBe('dead');
    expect(sheet.getRow(2).getCell(1).value).toBeInstanceOf(Date);
    expect(sheet.getRow(ROWS + 1).getCell(3).value).toBe(`evt_x${String(ROWS).padStart(5, '0')}`);
  });

  it('PDF is a report: filter, period, totals by status, then rows (up to the cap)', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const res = await download(app, `/api/v1/inbox/export.pdf?source=${SOURCE}&since=${encodeURIComponent(since)}`);
    expect(res.headers['content-type']).toBe('application/pdf');
    const parser = new PDFParse({ data: new Uint8Array(res.rawPayload) });
    const text = (await parser.getText()).text;
    await parser.destroy();
    expect(text).toContain('tekil: inbound deliveries');
    expect(text).toContain(`Filter: source = ${SOURCE}`);
    expect(text).toContain(`Period: from ${since}`);
    expect(text).toContain(`Totals: ${ROWS} rows (dead ${DEAD}, pending ${ROWS - DEAD})`);
    expect(text).toContain('evt_x00001');
    expect(text).toContain(`… and ${ROWS - PDF_MAX_ROWS} more rows`);
  });

  it('outbound deliveries export to Excel and PDF with their own filter', async () => {
    await t.db.query(`INSERT INTO endpoints (id, url, timeout_ms, max_in_flight) VALUES ('ep_export', 'https://example.com/h', 5000, 4)`);
    await t.db.query(
      `INSERT INTO outbox_messages (id, event_type, payload) SELECT 'msg_export_' || i, 'invoice.paid', '\\x7b7d' FROM generate_series(1, 3) AS i`,
    );
    await t.db.query(
      `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, last_status_code)
       SELECT 'default', 'msg_export_' || i, 'ep_export', CASE WHEN i = 1 THEN 'failed' ELSE 'succeeded' END, i, CASE WHEN i = 1 THEN 500 ELSE 200 END
       FROM generate_series(1, 3) AS i`,
    );
    await t.db.query(
      `INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) SELECT tenant_id, id, endpoint_id, true FROM outbox_deliveries WHERE endpoint_id = 'ep_export' AND status = 'failed'`,
    );
    const xlsx = await download(app, '/api/v1/deliveries/export.xlsx?endpoint_id=ep_export&status=succeeded');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(3);
    expect([sheet.getRow(2).getCell(2).value, sheet.getRow(3).getCell(2).value].sort()).toEqual(['msg_export_2', 'msg_export_3']);

    // One column set per kind: the CSV (the panel's link, the API's, the CLI's) has Excel's columns, in its order
    // (the next attempt last: it came later).
    const csv = (await download(app, '/api/v1/deliveries/export.csv?endpoint_id=ep_export&status=succeeded')).body.trim().split('\n');
    const columns = csv[0]!.split(',');
    expect(columns).toEqual([
      'delivery_id',
      'message_id',
      'event_type',
      'resource_id',
      'endpoint_id',
      'url',
      'status',
      'attempts',
      'last_status_code',
      'last_duration_ms',
      'last_error',
      'created_at',
      'last_attempt_at',
      'completed_at',
      'next_attempt_at',
      'erased_at',
    ]);
    expect(sheet.getRow(1).cellCount).toBe(columns.length);
    expect(csv).toHaveLength(3);
    expect(
      csv
        .slice(1)
        .map((line) => line.split(',')[1])
        .sort(),
    ).toEqual(['msg_export_2', 'msg_export_3']);

    const pdf = await download(app, '/api/v1/deliveries/export.pdf?endpoint_id=ep_export');
    const parser = new PDFParse({ data: new Uint8Array(pdf.rawPayload) });
    const text = (await parser.getText()).text;
    await parser.destroy();
    expect(text).toContain('tekil: outbound deliveries');
    expect(text).toContain('Filter: endpoint_id = ep_export');
    expect(text).toContain('Totals: 3 rows (failed 1, succeeded 2)');
    expect(text).toContain('msg_export_1');
  });

  it('characters XML 1.0 forbids (an event type holding \\uFFFE) are replaced in every format, and Excel still opens', async () => {
    const forbidden = 'odd\uFFFE\u0001\uFFFF.type';
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, event_type, body) VALUES ('xmlchars', 'evt_xml_1', $1, '\\x7b7d')`, [forbidden]);
    const replaced = 'odd\uFFFD\uFFFD\uFFFD.type';

    const xlsx = await download(app, '/api/v1/inbox/export.xlsx?source=xmlchars');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(2);
    expect(sheet.getRow(2).getCell(4).value).toBe(replaced);

    const csv = (await download(app, '/api/v1/inbox/export.csv?source=xmlchars')).body;
    expect(csv).toContain(`,${replaced},`);

    const pdf = await download(app, `/api/v1/inbox/export.pdf?source=xmlchars&type=${encodeURIComponent(forbidden)}`);
    const parser = new PDFParse({ data: new Uint8Array(pdf.rawPayload) });
    const text = (await parser.getText()).text;
    await parser.destroy();
    expect(text).toContain('Totals: 1 rows');
    expect(text).not.toMatch(/[\uFFFE\uFFFF\u0001]/);
  });

  it('an empty result is still a valid file', async () => {
    const res = await download(app, '/api/v1/inbox/export.xlsx?source=nobody');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    expect(workbook.worksheets[0]!.rowCount).toBe(1);
  });
});
