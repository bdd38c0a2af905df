import { TekilError } from './errors.js';

/**
 * The one cursor codec of every paged list (inbound deliveries, outbound messages and deliveries, the
 * simulator's provider list): a page's last key, as the base64url of a JSON array of its text parts.
 * Opaque to clients; each list checks what its parts mean (a time, an id) with `invalidCursor`.
 */

/** Longer than any key part tekil stores (ids are at most 255): a cursor holding more was not made by tekil. */
const MAX_PART_LENGTH = 1024;
/** In a `u` regex a surrogate pair is one code point: only a lone half matches. */
const LONE_SURROGATE = /\p{Cs}/u;

export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/**
 * Reads a cursor a client sent back into its `count` parts. Everything structural is checked here,
 * before the database sees it, so a damaged or forged cursor is a coded 400 and not a database error (a
 * NUL byte, a lone surrogate). A one-part cursor may also be the bare key's base64url, as outbound lists
 * wrote them before this codec: such cursors stay valid across an upgrade.
 */
export function decodeCursor(cursor: string, count: number): string[] {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    if (count !== 1) throw invalidCursor('it is not a cursor this API gave out', err);
  }
  const parts = Array.isArray(parsed) ? (parsed as unknown[]) : count === 1 ? [text] : undefined;
  if (!parts || parts.length !== count) throw invalidCursor('it is not a cursor this API gave out');
  if (!parts.every(isPartText)) throw invalidCursor('a key in it is not valid text');
  return parts;
}

function isPartText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_PART_LENGTH && !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/** The coded 400 of a cursor that is not one a list gave out. */
export function invalidCursor(why: string, cause?: unknown): TekilError {
  return new TekilError('VALIDATION_FAILED', `invalid cursor: ${why}`, {
    ...(cause === undefined ? {} : { cause }),
    hint: 'pass the next_cursor of the previous page unchanged, or leave the cursor out to start from the first page',
  });
}
