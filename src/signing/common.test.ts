import { describe, expect, it } from 'vitest';
import { isTekilError } from '../errors.js';
import {
  anySignatureMatches,
  checkTolerance,
  decodeSignature,
  getHeader,
  headerLines,
  parseTimestamp,
  parseTimestampedHeader,
  requireSignatureLines,
} from './common.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'OK';
  } catch (err) {
    return isTekilError(err) ? err.code : 'other';
  }
};

describe('signing building blocks', () => {
  it('decodes hex and base64 strictly (Buffer.from alone would skip bad characters)', () => {
    expect(decodeSignature('0aFF', 'hex')).toEqual(Buffer.from([0x0a, 0xff]));
    for (const bad of ['', 'abc', '0g', 'ab cd', ' abcd', 'abcd\n']) expect(decodeSignature(bad, 'hex')).toBeUndefined();
    expect(decodeSignature('AAE=', 'base64')).toEqual(Buffer.from([0, 1]));
    for (const bad of ['', 'AAE', 'AA=E', 'A-_=', 'AAE= ', 'AAE=AAE=']) expect(decodeSignature(bad, 'base64')).toBeUndefined();
  });

  it('timestamps are digits only', () => {
    expect(parseTimestamp('1700000000', 't')).toBe(1700000000);
    expect(codeOf(() => parseTimestamp(undefined, 't'))).toBe('TIMESTAMP_MISSING');
    expect(codeOf(() => parseTimestamp('', 't'))).toBe('TIMESTAMP_MISSING');
    for (const bad of ['1700000000abc', '1e9', ' 17', '17 ', '-1', '0x10', '1_000', '１７', '9999999999999999']) {
      expect([bad, codeOf(() => parseTimestamp(bad, 't'))]).toEqual([bad, 'TIMESTAMP_MALFORMED']);
    }
  });

  it('tolerance is two-sided and 0 disables it', () => {
    const now = 1_000_000_000_000;
    expect(codeOf(() => checkTolerance(1_000_000_000 - 10, 10, now))).toBe('OK');
    expect(codeOf(() => checkTolerance(1_000_000_000 + 10, 10, now))).toBe('OK');
    expect(codeOf(() => checkTolerance(1_000_000_000 - 11, 10, now))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(codeOf(() => checkTolerance(1_000_000_000 + 11, 10, now))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(codeOf(() => checkTolerance(0, 0, now))).toBe('OK');
  });

  it('compares lists in constant time per pair; different lengths are no match, not an error', () => {
    const a = Buffer.from('aaaa');
    expect(anySignatureMatches([a], [Buffer.from('aaa'), Buffer.from('aaaaa')])).toBe(false);
    expect(anySignatureMatches([Buffer.from('bbbb'), a], [Buffer.from('cccc'), Buffer.from('aaaa')])).toBe(true);
    expect(anySignatureMatches([], [a])).toBe(false);
  });

  it('reads headers case-insensitively and joins repeated ones', () => {
    expect(getHeader({ 'x-a': '1' }, 'X-A')).toBe('1');
    expect(getHeader({ 'X-A': '1' }, 'x-a')).toBe('1');
    expect(getHeader({ 'x-a': ['1', '2'] }, 'x-a')).toBe('1, 2');
    expect(getHeader({ 'x-a': [] }, 'x-a')).toBeUndefined();
  });

  it('reads every line of a header, and requires a non-blank signature line', () => {
    expect(headerLines({ 'x-a': ['1', '2'] }, 'X-A')).toEqual(['1', '2']);
    expect(headerLines({ 'X-A': 'one' }, 'x-a')).toEqual(['one']);
    expect(headerLines({}, 'x-a')).toEqual([]);
    expect(requireSignatureLines({ 'x-a': [' ', 'sig'] }, 'x-a')).toEqual(['sig']);
    expect(codeOf(() => requireSignatureLines({ 'x-a': ['', ' '] }, 'x-a'))).toBe('SIGNATURE_MISSING');
    expect(codeOf(() => requireSignatureLines({}, 'x-a'))).toBe('SIGNATURE_MISSING');
  });

  it('parses t=…,v1=… lists: values exactly as sent, other versions ignored, one t only', () => {
    expect(parseTimestampedHeader('t=17,v1=ab,v0=zz,v1=cd', 'h')).toEqual({ timestampText: '17', v1: ['ab', 'cd'] });
    expect(parseTimestampedHeader('t=17, v1=ab', 'h')).toEqual({ timestampText: '17', v1: ['ab'] });
    expect(parseTimestampedHeader('t= 17,v1=ab', 'h').timestampText).toBe(' 17');
    expect(parseTimestampedHeader('v1=ab', 'h')).toEqual({ timestampText: undefined, v1: ['ab'] });
    expect(codeOf(() => parseTimestampedHeader('t=1,v1=ab,t=2', 'h'))).toBe('SIGNATURE_MALFORMED');
    expect(codeOf(() => parseTimestampedHeader('garbage', 'h'))).toBe('SIGNATURE_MALFORMED');
  });
});
