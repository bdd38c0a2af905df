import { describe, expect, it } from 'vitest';
import { isTekilError } from '../../errors.js';
import { defineStatement, packBytes, quoteIdent } from './statement.js';

describe('named statements', () => {
  it('rewrites $names to positions once, in order of first use, and keeps casts', () => {
    const s = defineStatement<{ ids: string[]; now: Date }>('t', 'UPDATE q SET at = $now WHERE id = ANY($ids::text[]) AND at < $now');
    expect(s.text).toBe('UPDATE q SET at = $1 WHERE id = ANY($2::text[]) AND at < $1');
    expect(s.params).toEqual(['now', 'ids']);
    const now = new Date(0);
    expect(s.bind({ ids: ['a'], now })).toEqual([now, ['a']]);
  });

  it('carries its plan policy as the QueryOptions every run passes', () => {
    expect(defineStatement('a', 'SELECT 1', 'prepared').options).toEqual({ name: 'a' });
    expect(defineStatement('b', 'SELECT 1', 'prepared-replanned').options).toEqual({ name: 'b', sizeDependentPlan: true });
    expect(defineStatement('c', 'SELECT 1').options).toBeUndefined();
  });

  it('refuses a missing value and dollar quoting with a coded error', () => {
    const s = defineStatement<{ a: number; b: number }>('t', 'SELECT $a, $b');
    expect(() => s.bind({ a: 1 } as { a: number; b: number })).toThrow(/no value for \$b/);
    let caught: unknown;
    try {
      defineStatement('t', 'SELECT $body$x$body$');
    } catch (err) {
      caught = err;
    }
    expect(isTekilError(caught, 'INTERNAL')).toBe(true);
  });

  it('refuses a $1-style positional parameter with a coded error', () => {
    let caught: unknown;
    try {
      defineStatement('t', 'SELECT * FROM q WHERE id = $id AND at < $1');
    } catch (err) {
      caught = err;
    }
    expect(isTekilError(caught, 'INTERNAL')).toBe(true);
    expect((caught as Error).message).toMatch(/statement t: \$1 is a positional parameter/);
    expect(() => defineStatement('t', 'SELECT $12')).toThrow(/\$12 is a positional parameter/);
  });

  it('leaves $names and $1 inside comments and quoted strings as written', () => {
    const s = defineStatement<{ id: string; limit: number }>(
      't',
      `-- up to $limit rows after $after (a comment, not a parameter), $1 neither
SELECT '$id'' text -- not a comment', x /* $skipped, $2 */ FROM q WHERE id = $id LIMIT $limit`,
    );
    expect(s.text).toBe(`-- up to $limit rows after $after (a comment, not a parameter), $1 neither
SELECT '$id'' text -- not a comment', x /* $skipped, $2 */ FROM q WHERE id = $1 LIMIT $2`);
    expect(s.params).toEqual(['id', 'limit']);
    expect(s.bind({ id: 'a', limit: 5 })).toEqual(['a', 5]);
  });

  it('quotes plain identifiers and refuses the rest', () => {
    expect(quoteIdent('tekil_inbox')).toBe('"tekil_inbox"');
    expect(() => quoteIdent('a"; DROP')).toThrow(/invalid identifier/);
  });
});

describe('packBytes', () => {
  it('puts byte strings back to back with 1-based starts and lengths, empty ones included', () => {
    const parts = [Buffer.from('ab'), Buffer.alloc(0), Buffer.from([0, 255, 7])];
    const packed = packBytes(parts);
    expect([...packed.bytes]).toEqual([97, 98, 0, 255, 7]);
    expect(packed.starts).toEqual([1, 3, 3]);
    expect(packed.lengths).toEqual([2, 0, 3]);
    parts.forEach((part, i) => expect(packed.bytes.subarray(packed.starts[i]! - 1, packed.starts[i]! - 1 + packed.lengths[i]!)).toEqual(part));
  });
});
