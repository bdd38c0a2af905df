import { decodeCursor as decodeParts, encodeCursor as encodeParts, invalidCursor } from '../cursor.js';

/** Where a page ended: the last row's keyset (received_at as ISO text with microseconds, source, event id). */
export interface InboxCursor {
  receivedAt: string;
  source: string;
  eventId: string;
}

const ISO_MICROS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;

export function encodeCursor(cursor: InboxCursor): string {
  return encodeParts([cursor.receivedAt, cursor.source, cursor.eventId]);
}

/** Reads a cursor a client sent back; an impossible time is a 400 too, not a database error. */
export function decodeCursor(cursor: string): InboxCursor {
  const [receivedAt, source, eventId] = decodeParts(cursor, 3) as [string, string, string];
  if (!isValidTime(receivedAt)) throw invalidCursor('its time is not a valid timestamp');
  return { receivedAt, source, eventId };
}

function isValidTime(text: string): boolean {
  const m = ISO_MICROS.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  // Date.UTC rolls an impossible date over (Feb 30 → Mar 2): it is valid only if it reads back the same.
  const t = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return (
    t.getUTCFullYear() === year &&
    t.getUTCMonth() === month - 1 &&
    t.getUTCDate() === day &&
    t.getUTCHours() === hour &&
    t.getUTCMinutes() === minute &&
    t.getUTCSeconds() === second
  );
}
