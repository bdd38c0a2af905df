import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TekilError, errorCatalogue, toClientError, type ErrorCode } from './errors.js';

const codes = Object.keys(errorCatalogue) as ErrorCode[];

/** The rows of docs/errors.md's tables: `| \`CODE\` | status | meaning | what to do |`. */
function documentedCodes(): Map<string, { status: number; meaning: string; action: string }> {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, { status: number; meaning: string; action: string }>();
  for (const match of doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| (.+?) \| (.+?) \|$/gm)) {
    rows.set(match[1]!, { status: Number(match[2]), meaning: match[3]!.trim(), action: match[4]!.trim() });
  }
  return rows;
}

describe('the error catalogue', () => {
  it('documents every code in docs/errors.md with its status, meaning and what to do', () => {
    const documented = documentedCodes();
    for (const code of codes) {
      const row = documented.get(code);
      expect(row, `${code} is missing from docs/errors.md`).toBeDefined();
      expect(row!.status, `${code}'s status in docs/errors.md`).toBe(errorCatalogue[code].status);
      expect(row!.meaning.length).toBeGreaterThan(10);
      expect(row!.action.length).toBeGreaterThan(3);
    }
    expect(
      [...documented.keys()].filter((c) => !(c in errorCatalogue)),
      'codes documented but not in the catalogue',
    ).toEqual([]);
  });

  it('gives every code a status and a default message, used when a TekilError is made without one', () => {
    for (const code of codes) {
      expect(errorCatalogue[code].status).toBeGreaterThanOrEqual(400);
      expect(errorCatalogue[code].message).not.toBe('');
    }
    const err = new TekilError('OVERLOADED');
    expect(err).toMatchObject({ code: 'OVERLOADED', statusCode: 503, message: errorCatalogue.OVERLOADED.message });
    expect(new TekilError('NOT_FOUND', 'no message evt_1', { hint: 'h' }).toJSON()).toEqual({ error: 'NOT_FOUND', message: 'no message evt_1', hint: 'h' });
  });
});

describe('toClientError', () => {
  const framework = (code: string, statusCode: number, message = 'from the framework') => Object.assign(new Error(message), { code, statusCode });

  it("maps the framework's refusals to catalogue codes, keeping their message", () => {
    expect(toClientError(framework('FST_ERR_CTP_INVALID_JSON_BODY', 400)).toJSON()).toEqual({ error: 'BODY_NOT_JSON', message: 'from the framework' });
    expect(toClientError(framework('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415)).statusCode).toBe(415);
    expect(toClientError(framework('FST_ERR_VALIDATION', 400)).code).toBe('VALIDATION_FAILED');
    expect(toClientError(framework('FST_ERR_BAD_URL', 400)).code).toBe('REQUEST_MALFORMED');
    expect(toClientError(framework('FST_ERR_MAX_PARAM_LENGTH', 414)).code).toBe('URL_TOO_LONG');
  });

  it('maps an unknown client error by status, and anything else to INTERNAL without its text', () => {
    expect(toClientError(framework('SOMETHING_NEW', 404)).code).toBe('NOT_FOUND');
    expect(toClientError(framework('SOMETHING_NEW', 418)).toJSON()).toEqual({ error: 'REQUEST_MALFORMED', message: 'from the framework' });
    const internal = toClientError(new Error('relation "secret_table" does not exist'));
    expect(internal.toJSON()).toEqual({ error: 'INTERNAL', message: 'internal error' });
    expect(toClientError('a string').code).toBe('INTERNAL');
  });

  it("maps the store's data exceptions to VALIDATION_FAILED and its outages to STORE_UNAVAILABLE, never quoting it", () => {
    const pg = (code: string) => Object.assign(new Error('value "9999999999" is out of range for type integer'), { code });
    expect(toClientError(pg('22003')).code).toBe('VALIDATION_FAILED');
    expect(toClientError(pg('22003')).message).not.toContain('9999999999');
    expect(toClientError(pg('22P05')).code).toBe('VALIDATION_FAILED');
    expect(toClientError(pg('57P01')).code).toBe('STORE_UNAVAILABLE');
    expect(toClientError(pg('08006')).statusCode).toBe(503);
    expect(toClientError(pg('42P01')).code).toBe('INTERNAL');
  });

  it('passes a TekilError through', () => {
    const err = new TekilError('CONFLICT', 'already queued');
    expect(toClientError(err)).toBe(err);
  });
});
