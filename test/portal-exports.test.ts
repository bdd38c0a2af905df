import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import ExcelJS from 'exceljs';
import type { FastifyInstance } from 'fastify';
import { PDFParse } from 'pdf-parse';
import { Agent, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import type { Context } from '../src/service.js';
import { resolveSettings } from '../src/settings.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { selfSignedCertificate } from './helpers/embedding.js';

const ADMIN = 'portal-exports-admin-token';
const PROVIDER = 'Örnek Ödeme A.Ş.';
const TENANT = { id: 'm_anadolu_7f3', name: 'Anadolu Kitapçılık' };
const TARGET = 'https://anadolu-kitap.example/odeme/webhook';
/** Created at 09:30 UTC: 12:30 in Istanbul (UTC+3 all year). */
const CREATED = '2026-06-12T09:30:00.000Z';
const CREATED_TR = '12.06.2026 12:30:00';
const CREATED_EN = '2026-06-12 12:30:00';
const NEXT = '2026-06-12T10:00:00.000Z';
const NEXT_TR = '12.06.2026 13:00:00';

/** A solid red PNG, made here (no image library): what the report's header must show. */
function redPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, Buffer.from([220, 0, 0]))]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function pdfText(bytes: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

/**
 * The merchant's exports from the portal (docs/portal.md): in the portal's language and the merchant's
 * time zone, stated; with the provider's name and logo, the tenant's name (never its id), and every
 * column of the Webhooks page, the target URL included. Read back with the libraries that read them:
 * the CSV as text, the workbook with exceljs, the PDF parsed and rendered to an image.
 */
describe('the portal exports: the merchant language, zone and the provider brand', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let logoServer: Server;
  let previousDispatcher: Dispatcher;
  let cookie = '';
  let logoReads = 0;

  const asPortal = async (url: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { cookie } });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    return res;
  };

  beforeAll(async () => {
    // The provider's logo on its own https server; this test process trusts that server's certificate
    // (as a machine trusts its CAs), so tekil reads the logo as it would a real one.
    const tls = selfSignedCertificate();
    const logo = redPng(120, 30);
    logoServer = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      logoReads++;
      if (req.url !== '/logo.png') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'image/png' }).end(logo);
    });
    await new Promise<void>((resolve) => logoServer.listen(0, '127.0.0.1', resolve));
    previousDispatcher = getGlobalDispatcher();
    setGlobalDispatcher(new Agent({ connect: { ca: tls.cert } }));
    const logoUrl = `https://127.0.0.1:${(logoServer.address() as AddressInfo).port}/logo.png`;

    t = await createTestDb();
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-portal-exports-')) },
      portal: { name: PROVIDER, logo_url: logoUrl, public_url: 'http://127.0.0.1:1' },
    });
    const ctx: Context = {
      config,
      settings: resolveSettings(config, {}),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      metrics: createMetricsRegistry(false),
    };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: ADMIN });
    const admin = (method: 'POST', url: string, body: unknown) =>
      app.inject({ method, url: `/api/v1${url}`, headers: { authorization: `Bearer ${ADMIN}` }, payload: body as object });
    expect((await admin('POST', '/tenants', TENANT)).statusCode).toBe(201);
    await t.db.query(`INSERT INTO tenants (id, name) VALUES ('m_other', 'Other')`);
    await t.db.query(
      `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight) VALUES ('ep_anadolu', $1, $2, 5000, 4), ('ep_other', 'm_other', 'https://other.example/h', 5000, 4)`,
      [TENANT.id, TARGET],
    );
    await t.db.query(
      `INSERT INTO outbox_messages (id, tenant_id, event_type, payload, created_at)
       SELECT 'msg_tr_' || i, $1, 'payment.' || (ARRAY['failed', 'succeeded', 'pending'])[i], '\\x7b7d', $2::timestamptz FROM generate_series(1, 3) AS i`,
      [TENANT.id, CREATED],
    );
    await t.db.query(`INSERT INTO outbox_messages (id, tenant_id, event_type, payload) VALUES ('msg_other', 'm_other', 'payment.succeeded', '\\x7b7d')`);
    await t.db.query(
      `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, last_status_code, last_error, created_at, next_attempt_at)
       VALUES ($1, 'msg_tr_1', 'ep_anadolu', 'failed', 10, 500, 'HTTP 500', $2, $3),
              ($1, 'msg_tr_2', 'ep_anadolu', 'succeeded', 1, 200, NULL, $2, $3),
              ($1, 'msg_tr_3', 'ep_anadolu', 'pending', 2, 503, 'HTTP 503', $2, $3),
              ('m_other', 'msg_other', 'ep_other', 'succeeded', 1, 200, NULL, $2, $3)`,
      [TENANT.id, CREATED, NEXT],
    );
    await t.db.query(
      `INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) SELECT tenant_id, id, endpoint_id, status = 'failed' FROM outbox_deliveries WHERE status IN ('failed', 'pending')`,
    );

    // The merchant opens the portal with a one-time link: the session is the tenant's.
    const link = await admin('POST', `/tenants/${TENANT.id}/portal-links`, {});
    expect(link.statusCode, link.body).toBe(201);
    const opened = await app.inject({ method: 'GET', url: new URL(link.json<{ url: string }>().url).pathname });
    expect(opened.statusCode).toBe(303);
    cookie = String(opened.headers['set-cookie']).split(';')[0]!;
  }, 60_000);

  afterAll(async () => {
    setGlobalDispatcher(previousDispatcher);
    await app?.close();
    await t?.close();
    await new Promise((resolve) => logoServer?.close(resolve));
  });

  const turkish = `lang=tr&tz=${encodeURIComponent('Europe/Istanbul')}&portal=1`;

  it('CSV: Turkish headers (times naming the zone), Turkish statuses, Istanbul times, the target URL; the tenant’s rows only', async () => {
    const res = await asPortal(`/deliveries/export.csv?${turkish}`);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    // A byte order mark first: a spreadsheet reads ğ, ş, ı as UTF-8.
    expect([...res.rawPayload.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = res.rawPayload
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\n');
    const header = lines[0]!.split(',');
    expect(header).toEqual([
      'gönderim no',
      'mesaj kimliği',
      'olay türü',
      'nesne kimliği',
      'uç nokta',
      'hedef URL',
      'durum',
      'deneme sayısı',
      'HTTP yanıt kodu',
      'yanıt süresi (ms)',
      'hata',
      'oluşturuldu (Europe/Istanbul (UTC+03:00))',
      'son deneme (Europe/Istanbul (UTC+03:00))',
      'tamamlandı (Europe/Istanbul (UTC+03:00))',
      'sonraki deneme (Europe/Istanbul (UTC+03:00))',
      'silindi (kişisel veri) (Europe/Istanbul (UTC+03:00))',
    ]);
    expect(lines).toHaveLength(4);
    const byMessage = new Map(lines.slice(1).map((l) => [l.split(',')[1]!, l.split(',')]));
    expect(byMessage.has('msg_other')).toBe(false);
    const failed = byMessage.get('msg_tr_1')!;
    expect(failed[5]).toBe(TARGET);
    expect(failed[6]).toBe('başarısız');
    expect(failed[11]).toBe(CREATED_TR);
    // A next attempt only while one is coming (as the Webhooks page shows it).
    expect(failed[14]).toBe('');
    expect(byMessage.get('msg_tr_3')![6]).toBe('bekliyor');
    expect(byMessage.get('msg_tr_3')![14]).toBe(NEXT_TR);
    expect(byMessage.get('msg_tr_2')![6]).toBe('iletildi');
  });

  it('Excel: a Turkish sheet, times as dates in Istanbul wall-clock time shown dd.mm.yyyy, the provider as the workbook’s author and title', async () => {
    const res = await asPortal(`/deliveries/export.xlsx?${turkish}&status=failed`);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    expect(book.creator).toBe(PROVIDER);
    expect(book.title).toBe(`${PROVIDER}: webhook gönderimleri`);
    const sheet = book.worksheets[0]!;
    expect(sheet.name).toBe('webhooklar');
    expect(sheet.rowCount).toBe(2);
    const header = (sheet.getRow(1).values as unknown[]).slice(1).map(String);
    const col = (name: string) => header.indexOf(name) + 1;
    expect(col('hedef URL')).toBeGreaterThan(0);
    const row = sheet.getRow(2);
    expect(row.getCell(col('hedef URL')).value).toBe(TARGET);
    expect(row.getCell(col('durum')).value).toBe('başarısız');
    expect(row.getCell(col('mesaj kimliği')).value).toBe('msg_tr_1');
    const created = row.getCell(col('oluşturuldu (Europe/Istanbul (UTC+03:00))'));
    // A spreadsheet date has no zone: it holds the merchant's wall-clock time, and says so in its header.
    expect(created.value).toEqual(new Date('2026-06-12T12:30:00.000Z'));
    expect(created.numFmt).toBe('dd.mm.yyyy hh:mm:ss');
  });

  it('PDF: the provider’s logo and name, the tenant’s name (not its id), the zone stated, Turkish words, every Webhooks column with the target URL; rendered', async () => {
    const res = await asPortal(`/deliveries/export.pdf?${turkish}`);
    expect(res.headers['content-type']).toBe('application/pdf');
    const text = await pdfText(res.rawPayload);
    expect(text).toContain(`${PROVIDER}: webhook gönderimleri`);
    expect(text).toContain(`Üye işyeri: ${TENANT.name}`);
    expect(text).not.toContain(TENANT.id);
    expect(text).not.toContain('tekil');
    expect(text).toContain('Saat dilimi: Europe/Istanbul (UTC+03:00)');
    expect(text).toContain('Dönem: tüm zamanlar');
    expect(text).toContain('Toplam: 3 satır (başarısız 1, bekliyor 1, iletildi 1)');
    // The Webhooks page's columns: created, event type, target URL, attempts, status, HTTP code, response time, error, next attempt.
    // A cell wraps (a header, a long URL): its lines are read back joined.
    const words = text.replace(/\s+/g, ' ');
    for (const header of [
      'oluşturuldu',
      'olay türü',
      'hedef URL',
      'deneme sayısı',
      'durum',
      'HTTP yanıt kodu',
      'yanıt süresi (ms)',
      'hata',
      'sonraki deneme',
    ]) {
      expect(words).toContain(header);
    }
    expect(text.replace(/\n/g, '')).toContain(TARGET);
    expect(text).toContain(CREATED_TR);
    expect(text).toContain(NEXT_TR);
    expect(text).not.toContain('msg_other');

    // Rendered: the page shows the logo (red) in its top-left corner, and text below it.
    const parser = new PDFParse({ data: new Uint8Array(res.rawPayload) });
    const shot = await parser.getScreenshot({ scale: 1, first: 1 });
    await parser.destroy();
    const page = shot.pages[0]!;
    if (process.env.TEKIL_TEST_SHOTS) writeFileSync(join(process.env.TEKIL_TEST_SHOTS, 'portal-export-tr.png'), page.data);
    const image = await loadImage(Buffer.from(page.data));
    const canvas = createCanvas(image.width, image.height);
    const g = canvas.getContext('2d');
    g.drawImage(image, 0, 0);
    const corner = g.getImageData(36, 36, 100, 25).data;
    let red = 0;
    for (let i = 0; i < corner.length; i += 4) if (corner[i]! > 180 && corner[i + 1]! < 60 && corner[i + 2]! < 60) red++;
    expect(red / (corner.length / 4)).toBeGreaterThan(0.9);
    const body = g.getImageData(36, 80, image.width - 72, 200).data;
    let ink = 0;
    for (let i = 0; i < body.length; i += 4) if (body[i]! < 100 && body[i + 1]! < 100 && body[i + 2]! < 100) ink++;
    expect(ink).toBeGreaterThan(500);
    // The logo is read once and kept.
    await asPortal(`/deliveries/export.pdf?${turkish}&status=failed`);
    expect(logoReads).toBe(1);
  });

  it('the same exports in English from the English portal: English words, the zone stated, still the provider’s brand', async () => {
    const res = await asPortal(`/deliveries/export.csv?lang=en&tz=Europe%2FIstanbul&portal=1&status=failed`);
    const lines = res.body.trim().split('\n');
    expect(lines[0]).toContain('target URL,status,attempts,HTTP code,response time (ms),error,created (Europe/Istanbul (UTC+03:00))');
    expect(lines[1]).toContain(`,${TARGET},failed,10,500,`);
    expect(lines[1]).toContain(CREATED_EN);
    const pdf = await pdfText((await asPortal('/deliveries/export.pdf?lang=en&tz=Europe%2FIstanbul&portal=1')).rawPayload);
    expect(pdf).toContain(`${PROVIDER}: outbound deliveries`);
    expect(pdf).toContain(`Merchant: ${TENANT.name}`);
    expect(pdf).toContain('Time zone: Europe/Istanbul (UTC+03:00)');
  });

  it('the panel’s export stays tekil’s, in UTC, with column keys; a tenant named by its name; an unknown zone is refused', async () => {
    const admin = { authorization: `Bearer ${ADMIN}` };
    const csv = await app.inject({ method: 'GET', url: `/api/v1/deliveries/export.csv?tenant_id=${TENANT.id}&status=failed`, headers: admin });
    expect(csv.body.split('\n')[0]).toMatch(/^delivery_id,message_id,/);
    expect(csv.body).toContain(CREATED);
    const pdf = await app.inject({ method: 'GET', url: `/api/v1/deliveries/export.pdf?tenant_id=${TENANT.id}`, headers: admin });
    const text = await pdfText(pdf.rawPayload);
    expect(text).toContain('tekil: outbound deliveries');
    expect(text).toContain(`Merchant: ${TENANT.name}`);
    expect(text).not.toContain(PROVIDER);
    const refused = await app.inject({ method: 'GET', url: '/api/v1/deliveries/export.csv?tz=Mars%2FOlympus', headers: admin });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'VALIDATION_FAILED' });
  });
});
