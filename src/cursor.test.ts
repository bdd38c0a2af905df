import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.js';
import { isTekilError } from './errors.js';

const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const refusal = (fn: () => unknown) => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return isTekilError(err) ? `${err.code} ${err.statusCode}` : 'not coded';
  }
};

describe('the cursor codec', () => {
  it('round-trips any text parts, URL-safe', () => {
    for (const parts of [['inv_ab12_000042'], ['12345'], ['2026-11-30T23:59:59.123456Z', 'shop', 'evt_ödendi_😀'], ['a,b', 'c"d', 'e\\f']]) {
      const cursor = encodeCursor(parts);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(cursor, parts.length)).toEqual(parts);
    }
  });

  it('still reads a one-part cursor written as the bare key (the outbound lists’ earlier format)', () => {
    const old = (key: string) => Buffer.from(key).toString('base64url');
    expect(decodeCursor(old('evt_01jabc'), 1)).toEqual(['evt_01jabc']);
    expect(decodeCursor(old('4711'), 1)).toEqual(['4711']);
  });

  it('refuses a tampered or forged cursor with a coded 400', () => {
    const good = encodeCursor(['2026-11-30T23:59:59.123456Z', 'shop', 'evt_1']);
    const tampered = `A${good.slice(1)}`;
    for (const [bad, count] of [
      [tampered, 3],
      [good.slice(0, -4), 3],
      ['', 3],
      ['!!!', 3],
      [forged(['a', 'b']), 3],
      [forged(['a', 'b', 'c', 'd']), 3],
      [forged({ a: 1 }), 3],
      [forged(['a', '', 'c']), 3],
      [forged(['a', 'b', 'c\u0000']), 3],
      [forged(['a', 'b', 'c\udc00']), 3],
      [forged(['a', 'b', 'c'.repeat(1025)]), 3],
      [forged(['a', 'b', 7]), 3],
      [forged(['a', 'b']), 1],
      [forged([7]), 1],
      [Buffer.from('').toString('base64url'), 1],
    ] as const) {
      expect({ bad, count, refusal: refusal(() => decodeCursor(bad, count)) }).toEqual({ bad, count, refusal: 'VALIDATION_FAILED 400' });
    }
  });
});
