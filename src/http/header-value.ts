/**
 * HTTP header values are bytes, and clients refuse anything but visible ASCII in the ones they send
 * (undici throws on CR, LF and NUL, and Node on non-Latin-1). Values that come from a webhook — an
 * event type `sipariş.ödendi`, a resource id `müşteri-42` — are sent as they are when they are plain
 * visible ASCII, and otherwise in the RFC 8187 extended form: `UTF-8''` followed by the UTF-8 bytes,
 * percent-encoded except for RFC 8187's attr-chars. A value that merely starts with `UTF-8''` is
 * encoded too, so a receiver can always tell: a value starting with `UTF-8''` is encoded, and
 * `decodeURIComponent(value.slice(7))` gives the original text.
 */
export const ENCODED_PREFIX = "UTF-8''";

/** Visible ASCII (0x21–0x7e) with single inner spaces allowed; nothing that needs escaping. */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** RFC 8187 attr-char: kept as is in the extended form. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

export function headerValue(text: string): string {
  if (PLAIN.test(text) && !text.startsWith(ENCODED_PREFIX)) return text;
  let out = ENCODED_PREFIX;
  for (const byte of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && ATTR_CHAR.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The receiving side of headerValue: what an application does with a value it received (tests use it). */
export function decodeHeaderValue(value: string): string {
  return value.startsWith(ENCODED_PREFIX) ? decodeURIComponent(value.slice(ENCODED_PREFIX.length)) : value;
}
