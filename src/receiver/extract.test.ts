import { describe, expect, it } from 'vitest';
import { asTime, createExtractor } from './extract.js';
import { isTekilError } from '../errors.js';

const defaults = {
  event_id: ['body:event_id', 'header:x-webhook-id'],
  resource_id: ['body:data.invoice_id', 'body:data.id'],
  event_type: ['body:event_type'],
  occurred_at: ['body:occurred_at'],
};
const input = (body: unknown, headers: Record<string, string> = {}, headerEventId?: string) => ({
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  headers,
  headerEventId,
});
const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return isTekilError(err) ? err.code : 'other';
  }
  return 'none';
};

describe('field extraction', () => {
  it('takes the first locator of a list that finds a value', () => {
    const extract = createExtractor({}, defaults);
    expect(extract(input({ event_id: 'evt_1', event_type: 't', data: { id: 'r2' }, occurred_at: 1_700_000_000 }))).toEqual({
      eventId: 'evt_1',
      resourceId: 'r2',
      eventType: 't',
      occurredAt: new Date(1_700_000_000_000),
    });
    expect(extract(input({ data: {} }, { 'x-webhook-id': 'evt_h' })).eventId).toBe('evt_h');
    expect(extract(input({ event_id: '', data: {} }, { 'x-webhook-id': 'evt_h' })).eventId).toBe('evt_h');
  });

  it('lets a source override the scheme defaults, and falls back to the verified header id', () => {
    const extract = createExtractor({ event_id: ['body:meta.delivery'], resource_id: ['header:x-resource'] }, defaults);
    const fields = extract(input({ event_id: 'ignored', meta: { delivery: 42 } }, { 'x-resource': 'res_9' }));
    expect(fields.eventId).toBe('42');
    expect(fields.resourceId).toBe('res_9');
    expect(extract(input({ event_id: 'ignored' }, {}, 'msg_from_header')).eventId).toBe('msg_from_header');
  });

  it('reads numeric ids as written (no float round trip) and refuses ids with lone surrogates', () => {
    const extract = createExtractor({}, defaults);
    expect(extract(input('{"event_id": 17960923835832100003, "data": {"id": 1.50}}')).eventId).toBe('17960923835832100003');
    expect(extract(input('{"event_id": 1e3, "data": {"id": 1.50}}'))).toMatchObject({ eventId: '1e3', resourceId: '1.50' });
    expect(codeOf(() => extract(input('{"event_id": "x\\ud800"}')))).toBe('EVENT_ID_INVALID');
    expect(extract(input('{"event_id": "e", "data": {"id": "r\\udbff"}}')).resourceId).toBeNull();
  });

  it('indexes arrays in body paths', () => {
    const extract = createExtractor({ event_id: ['body:items.1.id'] }, defaults);
    expect(extract(input({ items: [{ id: 'a' }, { id: 'b' }] })).eventId).toBe('b');
  });

  it('refuses missing, wrong-kind, too long and NUL-carrying ids, and names a non-JSON body', () => {
    const extract = createExtractor({}, defaults);
    expect(codeOf(() => extract(input({ data: {} })))).toBe('EVENT_ID_MISSING');
    expect(codeOf(() => extract(input({ event_id: true })))).toBe('EVENT_ID_INVALID');
    expect(codeOf(() => extract(input({ event_id: 'x'.repeat(256) })))).toBe('EVENT_ID_INVALID');
    expect(codeOf(() => extract(input({ event_id: 'a\u0000b' })))).toBe('EVENT_ID_INVALID');
    expect(codeOf(() => extract(input('<xml/>')))).toBe('BODY_NOT_JSON');
    expect(codeOf(() => extract(input('<xml/>', { 'x-webhook-id': 'evt_ok' })))).toBe('none');
  });

  it('does not parse the body when header locators find everything', () => {
    const extract = createExtractor(
      { event_id: ['header:x-id'], resource_id: ['header:x-r'], event_type: ['header:x-t'], occurred_at: ['header:x-at'] },
      defaults,
    );
    expect(extract(input('not json at all', { 'x-id': 'e', 'x-r': 'r', 'x-t': 't', 'x-at': '2026-01-02T03:04:05Z' }))).toEqual({
      eventId: 'e',
      resourceId: 'r',
      eventType: 't',
      occurredAt: new Date('2026-01-02T03:04:05Z'),
    });
  });

  it('reads provider times as ISO strings, unix seconds or milliseconds, and ignores nonsense', () => {
    expect(asTime('2026-11-29T10:00:00Z')?.toISOString()).toBe('2026-11-29T10:00:00.000Z');
    expect(asTime('2026-11-29T13:00:00+03:00')?.toISOString()).toBe('2026-11-29T10:00:00.000Z');
    expect(asTime(1_764_410_400)?.toISOString()).toBe('2025-11-29T10:00:00.000Z');
    expect(asTime('1764410400')?.toISOString()).toBe('2025-11-29T10:00:00.000Z');
    expect(asTime(1_764_410_400_000)?.toISOString()).toBe('2025-11-29T10:00:00.000Z');
    expect(asTime('yesterday')).toBeNull();
    expect(asTime({})).toBeNull();
    expect(asTime(-5)).toBeNull();
  });
});
