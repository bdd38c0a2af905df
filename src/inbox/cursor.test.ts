import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.js';
import { isTekilError } from '../errors.js';

const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return isTekilError(err) ? err.code : 'not coded';
  }
};

describe('inbox cursor', () => {
  it('round-trips the keyset, microseconds and any text included', () => {
    const cursor = { receivedAt: '2026-11-30T23:59:59.123456Z', source: 'shop', eventId: 'evt_ödendi_😀' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it('refuses what it did not give out, with VALIDATION_FAILED', () => {
    for (const bad of [
      '',
      '!!!',
      forged(['2026-11-30T23:59:59.123456Z', 'shop']),
      forged(['2026-02-30T00:00:00.000000Z', 'shop', 'e']),
      forged(['2026-11-30 23:59:59+00', 'shop', 'e']),
      forged(['2026-11-30T24:00:00.000000Z', 'shop', 'e']),
      forged(['2026-11-30T00:00:00.000000Z', '', 'e']),
      forged(['2026-11-30T00:00:00.000000Z', 'shop', 'e\u0000']),
      forged(['2026-11-30T00:00:00.000000Z', 'shop', 'e\udc00']),
      forged(['2026-11-30T00:00:00.000000Z', 'shop', 'e'.repeat(1025)]),
      forged(['2026-11-30T00:00:00.000000Z', 'shop', 7]),
    ]) {
      expect({ bad, code: codeOf(() => decodeCursor(bad)) }).toEqual({ bad, code: 'VALIDATION_FAILED' });
    }
  });
});
