import { isUtf8 } from 'node:buffer';
import type { SourceConfig } from '../config/source.js';
import { TekilError } from '../errors.js';
import type { FieldDefaults, IncomingHeaders } from '../signing/types.js';
import { compileLocator, formDecodesAsUtf8, isComposite, RequestFields, type LocatorReader, type LocatorSpec } from '../signing/request-fields.js';

/** Longest event or resource id accepted; longer ones are almost certainly not ids. */
export const MAX_ID_LENGTH = 255;
/** Longest event type kept; a longer value is truncated rather than rejected. */
export const MAX_TYPE_LENGTH = 255;

export interface ExtractedFields {
  eventId: string;
  resourceId: string | null;
  eventType: string | null;
  occurredAt: Date | null;
}

/** The request as extraction sees it: JSON is parsed lazily, at most once, and only if needed. */
export interface ExtractionInput {
  body: Buffer;
  headers: IncomingHeaders;
  /** The delivery id the signature scheme read from a verified header, if any. */
  headerEventId?: string | undefined;
}

/** The request as extraction reads it, and whether a value read from it may stand for other bytes. */
class LazyRequest extends RequestFields {
  constructor(readonly input: ExtractionInput) {
    super(input.body, input.headers);
  }

  /**
   * True when a U+FFFD read from the body may stand for bytes that are not UTF-8: decoding replaced
   * them, so "x\xFF" and "x\xFE" (or a form's `x%FF` and `x%FE`) both read "x\uFFFD". Checked only
   * for a value that holds one.
   */
  mayHaveReplaced(value: string): boolean {
    if (!value.includes('\uFFFD')) return false;
    return !isUtf8(this.input.body) || (this.formRead && !formDecodesAsUtf8(this.input.body));
  }
}

type Lookup = LocatorReader;

/**
 * The parts of a composite id joined so that different parts never make the same id: each part's
 * `\` and `:` are escaped before the parts are joined with `:` (`A:1` + `B` is `A\:1:B`, `A` + `1:B`
 * is `A:1\:B`).
 */
export function joinIdParts(parts: readonly string[]): string {
  return parts.map((p) => p.replaceAll('\\', '\\\\').replaceAll(':', '\\:')).join(':');
}

/** A composite: every part found (as an id), joined; else nothing. */
function compileComposite(locators: readonly string[]): Lookup {
  const lookups = locators.map((l) => compileLocator(l, true));
  return (req) => {
    const parts: string[] = [];
    for (const lookup of lookups) {
      const v = lookup(req);
      const part = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
      if (typeof part !== 'string' || part === '') return undefined;
      parts.push(part);
    }
    return joinIdParts(parts);
  };
}

/** A list of locators: the value of the first one that finds something. */
function compileList(locators: readonly LocatorSpec[], numbersAsText = false): Lookup {
  const lookups = locators.map((l) => (isComposite(l) ? compileComposite(l.all) : compileLocator(l, numbersAsText)));
  return (req) => {
    for (const lookup of lookups) {
      const v = lookup(req);
      if (v !== undefined && v !== null && v !== '') return v;
    }
    return undefined;
  };
}

/**
 * A lone UTF-16 surrogate (JSON's `"\ud800"`) has no UTF-8 form: stored, it becomes U+FFFD, so
 * `"x\ud800"` and `"x\udbff"` would be one id. (In a `u` regex a proper pair is one code point.)
 */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * An id as stored, or undefined when it cannot be stored faithfully: Postgres text cannot hold NUL
 * and UTF-8 cannot hold a lone surrogate, and a U+FFFD decoded from bytes that are not UTF-8 no longer
 * says which bytes they were: such ids are refused rather than mangled. Numbers from
 * the body arrive as their raw text (see compileLocator).
 */
function asId(v: unknown, req: LazyRequest): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return undefined;
  if (v.length === 0 || v.length > MAX_ID_LENGTH || v.includes('\u0000') || LONE_SURROGATE.test(v) || req.mayHaveReplaced(v)) return undefined;
  return v;
}

function asType(v: unknown): string | null {
  if (typeof v !== 'string' || v.length === 0 || v.includes('\u0000')) return null;
  return v.length > MAX_TYPE_LENGTH ? v.slice(0, MAX_TYPE_LENGTH) : v;
}

/**
 * The provider's event time: an ISO-8601 string, or unix seconds as a number or a digit string
 * (values that only make sense as milliseconds are read as milliseconds).
 */
export function asTime(v: unknown): Date | null {
  let ms: number;
  if (typeof v === 'number' && Number.isFinite(v)) {
    ms = v > 1e11 ? v : v * 1000;
  } else if (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v)) {
    const n = Number(v);
    ms = n > 1e11 ? n : n * 1000;
  } else if (typeof v === 'string' && v.length <= 64) {
    ms = Date.parse(v);
  } else {
    return null;
  }
  if (!Number.isFinite(ms)) return null;
  const d = new Date(ms);
  // Postgres timestamptz covers a narrower range than JS Date; far-off values are not real times.
  const year = d.getUTCFullYear();
  return year >= 1970 && year < 10_000 ? d : null;
}

export type Extractor = (input: ExtractionInput) => ExtractedFields;

/**
 * Builds the field extractor of one source. The source's own locators win over the scheme's
 * defaults; when no locator finds an event id, the id the scheme read from a verified header is used.
 */
export function createExtractor(source: Pick<SourceConfig, 'event_id' | 'resource_id' | 'event_type' | 'occurred_at'>, defaults: FieldDefaults): Extractor {
  const eventId = compileList(source.event_id ?? defaults.event_id, true);
  const resourceId = compileList(source.resource_id ?? defaults.resource_id, true);
  const eventType = compileList(source.event_type ?? defaults.event_type);
  const occurredAt = compileList(source.occurred_at ?? defaults.occurred_at);
  return (input) => {
    const req = new LazyRequest(input);
    const rawId = eventId(req);
    const id = rawId === undefined ? input.headerEventId || undefined : asId(rawId, req);
    if (id === undefined) {
      if (rawId !== undefined) {
        throw new TekilError(
          'EVENT_ID_INVALID',
          `the event id must be a non-empty string or a number of at most ${MAX_ID_LENGTH} characters, without NUL, unpaired surrogates (\\ud800-\\udfff) or bytes that are not UTF-8`,
        );
      }
      if (req.notJson) throw new TekilError('BODY_NOT_JSON', 'the body is not JSON, so the event id cannot be read from it');
      throw new TekilError('EVENT_ID_MISSING', "no event id found in the request (see the source's event_id locators)");
    }
    if (id.length > MAX_ID_LENGTH) {
      throw new TekilError('EVENT_ID_INVALID', `the event id must be at most ${MAX_ID_LENGTH} characters`);
    }
    return {
      eventId: id,
      resourceId: asId(resourceId(req), req) ?? null,
      eventType: asType(eventType(req)),
      occurredAt: asTime(occurredAt(req)),
    };
  };
}
