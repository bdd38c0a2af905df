import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { exportWords, formatTime, statusWords } from '../src/dashboard/exports/locale.js';
import { errorCatalogue } from '../src/errors.js';
import { errorLanguage, errorMessagesTr } from '../src/errors-tr.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';

const WEB = new URL('../web/', import.meta.url);
type Dates = {
  formatTime(value: string | Date, lang: 'en' | 'tr', timeZone?: string): string;
  formatInput(value: string | Date, lang: 'en' | 'tr'): string;
  parseInput(text: string): Date | null;
};
const dates = (await import(new URL('dates.js', WEB).href)) as Dates;
const { statusWords: panelStatusWords } = (await import(new URL('words-status.js', WEB).href)) as {
  statusWords: { en: Record<string, string>; tr: Record<string, string> };
};

const keys = (o: object) => Object.keys(o).sort();

describe('English and Turkish keep the same keys', () => {
  it('the error catalogue: every code has a Turkish message of its own, and no Turkish message names a code the catalogue lacks', () => {
    expect(keys(errorMessagesTr)).toEqual(keys(errorCatalogue));
    for (const [code, message] of Object.entries(errorMessagesTr)) {
      expect(message.length, code).toBeGreaterThan(2);
      expect(message, `${code} is left in English`).not.toBe(errorCatalogue[code as keyof typeof errorCatalogue].message);
    }
  });

  it("the exports' words and statuses; the statuses are the panel's and the portal's words", () => {
    expect(keys(exportWords.tr)).toEqual(keys(exportWords.en));
    expect(keys(statusWords.tr)).toEqual(keys(statusWords.en));
    for (const lang of ['en', 'tr'] as const) {
      for (const [value, word] of Object.entries(statusWords[lang])) expect(word, `${lang}.${value}`).toBe(panelStatusWords[lang][value]);
    }
  });
});

describe('one time format per language, in the panel, the portal and the exports', () => {
  const instants = ['2026-06-12T09:30:00.000Z', '2026-12-31T21:05:09.000Z', '2027-01-01T00:00:00.000Z'];

  it('the browser’s formatter (web/dates.js) writes what the exports write, in any zone', () => {
    for (const at of instants) {
      for (const zone of ['Europe/Istanbul', 'UTC', 'America/New_York']) {
        for (const lang of ['en', 'tr'] as const) expect(dates.formatTime(at, lang, zone)).toBe(formatTime(new Date(at), lang, zone));
      }
    }
    expect(dates.formatTime(instants[1]!, 'tr', 'Europe/Istanbul')).toBe('01.01.2027 00:05:09');
    expect(dates.formatTime(instants[1]!, 'en', 'Europe/Istanbul')).toBe('2027-01-01 00:05:09');
  });

  it("a time field's text reads back in either language's format; a day that does not exist or another form is refused", () => {
    for (const at of instants) {
      const minute = new Date(Math.floor(Date.parse(at) / 60_000) * 60_000);
      for (const lang of ['en', 'tr'] as const) expect(dates.parseInput(dates.formatInput(minute, lang))?.getTime()).toBe(minute.getTime());
    }
    expect(dates.parseInput('31.02.2026 10:00')).toBeNull();
    expect(dates.parseInput('06/12/2026 10:00')).toBeNull();
    expect(dates.parseInput('12.06.2026 9:05')?.getMinutes()).toBe(5);
  });

  it('no page writes a time its own way: no browser date picker, no toLocale… outside web/dates.js', () => {
    const files = [
      ...readdirSync(WEB)
        .filter((f) => f.endsWith('.js'))
        .map((f) => new URL(f, WEB)),
      ...readdirSync(new URL('portal/', WEB))
        .filter((f) => f.endsWith('.js'))
        .map((f) => new URL(`portal/${f}`, WEB)),
    ].filter((u) => !u.pathname.endsWith('/dates.js'));
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(text, file.pathname).not.toMatch(/datetime-local|type: 'date'|toLocale(String|DateString|TimeString)/);
    }
  });
});

describe('refusals in the caller’s language (Accept-Language), over HTTP', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let base = '';
  const ADMIN = 'languages-admin-token';

  beforeAll(async () => {
    t = await createTestDb();
    app = await buildApp({ ctx: testContext(t.db, workerTestConfig()), roles: new Set(['api']), adminToken: ADMIN });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  const call = async (path: string, headers: Record<string, string>) => {
    const res = await request(`${base}${path}`, { headers });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, string> };
  };

  it('reads the first language the header names', () => {
    expect(errorLanguage('tr')).toBe('tr');
    expect(errorLanguage('tr-TR,tr;q=0.9,en-US;q=0.8')).toBe('tr');
    expect(errorLanguage('en-US,en;q=0.9,tr;q=0.8')).toBe('en');
    expect(errorLanguage('en;q=0.5, tr;q=0.9')).toBe('tr');
    expect(errorLanguage(undefined)).toBe('en');
    expect(errorLanguage('trk')).toBe('en');
  });

  it('a Turkish caller gets the code’s Turkish message (and the English specifics as detail); others get English', async () => {
    const tr = await call('/api/v1/session', { 'accept-language': 'tr' });
    expect(tr).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', message: errorMessagesTr.UNAUTHORIZED, detail: expect.any(String) } });
    const en = await call('/api/v1/session', {});
    expect(en.status).toBe(401);
    expect(en.body.message).not.toBe(errorMessagesTr.UNAUTHORIZED);
    expect(en.body.detail).toBeUndefined();

    const refused = await call('/api/v1/deliveries?status=lost', { authorization: `Bearer ${ADMIN}`, 'accept-language': 'tr-TR,tr;q=0.9' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'VALIDATION_FAILED', message: 'girilen değer geçerli değil' });
    expect(refused.body.detail).toContain('status');

    const missing = await call('/api/v1/tenants/nobody', { authorization: `Bearer ${ADMIN}`, 'accept-language': 'tr' });
    expect(missing).toMatchObject({ status: 404, body: { error: 'TENANT_NOT_FOUND', message: 'böyle bir üye işyeri yok' } });
    const noRoute = await call('/api/v1/nothing-here', { 'accept-language': 'tr' });
    expect(noRoute.body.message).toBe('bulunamadı');
  });
});
