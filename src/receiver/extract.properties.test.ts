import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createExtractor, MAX_ID_LENGTH } from './extract.js';
import { isTekilError } from '../errors.js';

/**
 * The body id extraction round-trips every id exactly: whatever the string (any Unicode, escapes,
 * quotes, dots) or the number (beyond 2^53, negative, exponents, decimals, as written), wherever
 * it sits in the document (nested objects, arrays, look-alike sibling keys, duplicate keys,
 * whitespace), the extracted id is the string value or the number's text as sent.
 */
const noDefaults = { event_id: [], resource_id: [], event_type: [], occurred_at: [] };

/** A storable id string: no NUL, no lone surrogate (those are refused by design, see extract.ts). */
const idString = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('"', '\\', '.', '/', '\u2028', '\u00e9', '\u{1f600}', '\u{1f1f9}\u{1f1f7}', '\ufeff'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    minLength: 1,
    maxLength: 60,
  })
  .filter((s) => s.length <= MAX_ID_LENGTH && !s.includes('\u0000') && !/\p{Cs}/u.test(s));

/** A JSON number exactly as a provider may write it. */
const numberText = fc.oneof(
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 30 })).map(([m, e]) => `${m}e${e}`),
  fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.nat({ max: 999_999 })).map(([a, b]) => `${a}.${b}`),
);

/** An object key: anything but a dot, which separates path segments in a locator. */
const key = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((k) => !k.includes('.') && !/^\d+$/.test(k));

/** Wraps the raw value text in a document along `path`, with decoys around it; answers the JSON text. */
function embed(valueText: string, path: string[], decoys: Array<[string, unknown]>, spaces: string): string {
  let text = valueText;
  for (let i = path.length - 1; i >= 0; i--) {
    const seg = path[i]!;
    if (/^\d+$/.test(seg)) {
      const before = Array.from({ length: Number(seg) }, (_, n) => JSON.stringify({ n, v: decoys[n % Math.max(1, decoys.length)]?.[1] ?? null }));
      text = `[${spaces}${[...before, text].join(`,${spaces}`)}${spaces}]`;
    } else {
      const siblings = decoys.filter(([k]) => k !== seg).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
      // A look-alike key first, the real one last (the last duplicate key wins, as in JSON.parse).
      text = `{${spaces}${[...siblings, `${JSON.stringify(seg + 'x')}:1`, `${JSON.stringify(seg)}:${spaces}${text}`].join(`,${spaces}`)}${spaces}}`;
    }
  }
  return text;
}

const pathArb = fc
  .array(fc.oneof({ weight: 4, arbitrary: key }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }).map(String) }), { minLength: 1, maxLength: 5 })
  .filter((p) => !/^\d+$/.test(p[0]!));
const decoysArb = fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 2 })), { maxLength: 4 });
const spacesArb = fc.constantFrom('', ' ', '\n\t ', '\r\n');

function extractId(path: string[], body: string): string {
  const extract = createExtractor({ event_id: [`body:${path.join('.')}`] }, noDefaults);
  return extract({ body: Buffer.from(body, 'utf8'), headers: {} }).eventId;
}

describe('body id extraction under generated documents', () => {
  it('a string id comes back exactly, escapes and all', () => {
    fc.assert(
      fc.property(idString, pathArb, decoysArb, spacesArb, fc.boolean(), (id, path, decoys, spaces, asciiEscaped) => {
        // Providers write non-ASCII either as UTF-8 or as \\u escapes; both must give the same id.
        const text = asciiEscaped
          ? JSON.stringify(id).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
          : JSON.stringify(id);
        expect(extractId(path, embed(text, path, decoys, spaces))).toBe(id);
      }),
      { numRuns: 300 },
    );
  });

  it('a number id comes back as the text the provider wrote, never through a double', () => {
    fc.assert(
      fc.property(numberText, pathArb, decoysArb, spacesArb, (num, path, decoys, spaces) => {
        expect(extractId(path, embed(num, path, decoys, spaces))).toBe(num);
      }),
      { numRuns: 300 },
    );
  });

  it('any bytes: an id, or a coded error, nothing else', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
          fc.json().map((j) => Buffer.from(j)),
        ),
        pathArb,
        (body, path) => {
          const extract = createExtractor({ event_id: [`body:${path.join('.')}`] }, noDefaults);
          try {
            expect(typeof extract({ body, headers: {} }).eventId).toBe('string');
          } catch (err) {
            if (!isTekilError(err)) throw new Error('extraction threw an uncoded error', { cause: err });
            expect(['EVENT_ID_MISSING', 'EVENT_ID_INVALID', 'BODY_NOT_JSON']).toContain(err.code);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
