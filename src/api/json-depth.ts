/**
 * How deep the admin API's JSON bodies may nest: objects and arrays inside each other, the body itself
 * counting as one. No admin request needs more (a message's `data` gets all but one of them), and a
 * value nested much deeper makes every walk over it, down to the envelope's serialisation, exhaust the
 * stack: refused up front with BODY_TOO_DEEP instead.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when the JSON text nests objects and arrays deeper than `max`. Read on the text, before it is
 * parsed, in one pass without recursion; brackets inside strings do not count.
 */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}
