import { TekilError } from '../errors.js';

/** Where a page ended: the last row's keyset (received_at as ISO text with microseconds, source, event id). */
export interface InboxCursor {
  receivedAt: string;
  source: string;
  eventId: string;
}

const ISO_MICROS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;
/** Longer than any id the receiver stores (255): a cursor holding more was not made by tekil. */
const MAX_KEY_LENGTH = 1024;
/** In a `u` regex a surrogate pair is one code point: only a lone half matches. */
const LONE_SURROGATE = /\p{Cs}/u;

export function encodeCursor(cursor: InboxCursor): string {
  return Buffer.from(JSON.stringify([cursor.receivedAt, cursor.source, cursor.eventId])).toString('base64url');
}

/**
 * Reads a cursor a client sent back. Everything is checked here, before the database sees it, so a
 * damaged or forged cursor is a 400 and not a database error (an impossible date, a NUL byte).
 */
export function decodeCursor(cursor: string): InboxCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (err) {
    throw invalid('it is not a cursor this API gave out', err);
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw invalid('it is not a cursor this API gave out');
  const [receivedAt, source, eventId] = parsed as unknown[];
  if (typeof receivedAt !== 'string' || !isValidTime(receivedAt)) throw invalid('its time is not a valid timestamp');
  if (!isKeyText(source) || !isKeyText(eventId)) throw invalid('its source or event id is not valid text');
  return { receivedAt, source, eventId };
}

function isValidTime(text: string): boolean {
  const m = ISO_MICROS.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  // Date.UTC rolls an impossible date over (Feb 30 → Mar 2): it is valid only if it reads back the same.
  const t = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return (
    t.getUTCFullYear() === year && t.getUTCMonth() === month - 1 && t.getUTCDate() === day && t.getUTCHours() === hour && t.getUTCMinutes() === minute && t.getUTCSeconds() === second
  );
}

function isKeyText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_KEY_LENGTH && !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

function invalid(why: string, cause?: unknown): TekilError {
  return new TekilError('VALIDATION_FAILED', `invalid cursor: ${why}`, {
    ...(cause === undefined ? {} : { cause }),
    hint: 'pass the next_cursor of the previous page unchanged, or leave the cursor out to start from the newest',
  });
}
