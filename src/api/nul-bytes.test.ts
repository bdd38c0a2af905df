import { describe, expect, it } from 'vitest';
import { findNulByte } from './nul-bytes.js';

describe('findNulByte', () => {
  it('names the first string holding a NUL, at any depth', () => {
    expect(findNulByte({ a: 'ok', b: { c: ['x', 'y\u0000'] } }, 'body')).toBe('body.b.c.1');
    expect(findNulByte('a\u0000', 'params.id')).toBe('params.id');
  });

  it('names a key holding a NUL, escaped', () => {
    expect(findNulByte({ 'k\u0000': 1 }, 'body')).toBe('body.k\\u0000');
  });

  it('passes values without one', () => {
    expect(findNulByte({ a: 1, b: null, c: [true, 'text', { d: 'ü' }] }, 'body')).toBeUndefined();
    expect(findNulByte(undefined, 'body')).toBeUndefined();
  });
});
