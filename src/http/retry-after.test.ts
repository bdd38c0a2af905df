import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.js';

describe('Retry-After', () => {
  it('reads Retry-After as seconds or an HTTP date, and ignores anything else', () => {
    const now = Date.parse('2026-12-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Tue, 01 Dec 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
