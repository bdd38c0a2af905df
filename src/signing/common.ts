import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { TekilError } from '../errors.js';
import type { IncomingHeaders } from './types.js';

/** The pieces every scheme shares: header lookup, HMAC, strict decoding, timestamps, comparison. */

export type HmacAlgorithm = 'sha256' | 'sha1' | 'sha512';
export type SignatureEncoding = 'hex' | 'base64';

/**
 * A header's value by case-insensitive name. Repeated headers arrive as an array (or already joined by
 * Node with ", "); they are joined the same way so a scheme sees one text either way.
 */
export function getHeader(headers: IncomingHeaders, name: string): string | undefined {
  const value = rawHeader(headers, name);
  if (Array.isArray(value)) return value.length ? value.join(', ') : undefined;
  return value;
}

/** A header as it arrived, by case-insensitive name (callers outside Fastify may pass mixed-case names). */
function rawHeader(headers: IncomingHeaders, name: string): string | string[] | undefined {
  const lower = name.toLowerCase();
  const value = headers[lower];
  if (value !== undefined) return value;
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === lower) return headers[key];
  }
  return undefined;
}

/** Every line of a header, by case-insensitive name: one per line when they arrive apart (an array). */
export function headerLines(headers: IncomingHeaders, name: string): string[] {
  const value = rawHeader(headers, name);
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * The signature header's non-blank lines, or SIGNATURE_MISSING when there are none. A header sent
 * twice (by a proxy, or a provider during a rotation) is two lines; each is parsed on its own,
 * since joining them with ", " would split a signature list in the wrong place.
 */
export function requireSignatureLines(headers: IncomingHeaders, name: string): string[] {
  const lines = headerLines(headers, name).filter((line) => line.trim() !== '');
  if (lines.length === 0) throw new TekilError('SIGNATURE_MISSING', `missing ${name} header`);
  return lines;
}

/** One part of a signed payload: text (hashed as UTF-8) or raw bytes. */
export type PayloadPart = string | Buffer;

export function hmac(algorithm: HmacAlgorithm, key: Buffer | string, parts: readonly PayloadPart[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Strict decoding: Buffer.from silently skips bad characters, which would let a mangled signature
 * decode to something. Undecodable text is `undefined` (no match), never an exception.
 */
export function decodeSignature(text: string, encoding: SignatureEncoding): Buffer | undefined {
  if (text.length === 0) return undefined;
  if (encoding === 'hex') return HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/**
 * True when any candidate equals any expected MAC. Every pair is compared with timingSafeEqual on
 * equal-length buffers; a length mismatch is a plain "no match". All pairs are visited, so the time
 * taken does not tell which one matched.
 */
export function anySignatureMatches(expected: readonly Buffer[], candidates: readonly Buffer[]): boolean {
  let matched = false;
  for (const candidate of candidates) {
    for (const mac of expected) {
      if (candidate.length === mac.length && timingSafeEqual(candidate, mac)) matched = true;
    }
  }
  return matched;
}

const DIGITS = /^[0-9]{1,15}$/;

/** A signed timestamp: all digits, nothing else (no sign, exponent, spaces or fraction). */
export function parseTimestamp(text: string | undefined, where: string): number {
  if (text === undefined || text === '') throw new TekilError('TIMESTAMP_MISSING', `missing timestamp (${where})`);
  if (!DIGITS.test(text)) throw new TekilError('TIMESTAMP_MALFORMED', `timestamp (${where}) must be decimal digits only`);
  return Number(text);
}

/** Two-sided tolerance around `nowMs`; 0 disables the check. */
export function checkTolerance(timestampSec: number, toleranceSec: number, nowMs: number | undefined): void {
  if (toleranceSec <= 0) return;
  const nowSec = Math.floor((nowMs ?? Date.now()) / 1000);
  const skew = timestampSec - nowSec;
  if (skew < -toleranceSec || skew > toleranceSec) {
    const direction = skew < 0 ? 'old' : 'in the future';
    throw new TekilError('TIMESTAMP_OUT_OF_TOLERANCE', `timestamp is ${Math.abs(skew)} s ${direction}; tolerance is ${toleranceSec} s`);
  }
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function bodyBytes(body: Buffer | string): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

export function requireSecrets(secrets: readonly string[]): void {
  if (secrets.length === 0) throw new TekilError('CONFIG_INVALID', 'no secret to sign or verify with');
}

/** The header's signature list is unusable for this scheme. */
export function malformed(message: string): TekilError {
  return new TekilError('SIGNATURE_MALFORMED', message);
}

export function invalid(header: string, count: number, secrets: number): TekilError {
  return new TekilError(
    'SIGNATURE_INVALID',
    `no signature in ${header} matches (${count} signature${count === 1 ? '' : 's'} checked against ${secrets} secret${secrets === 1 ? '' : 's'})`,
  );
}

/**
 * `t=<unix>,v1=<hex>[,v1=<hex>…]`, the layout Stripe and Paymos share. Unknown keys (`v0`, future
 * versions) are ignored; a repeated `t` is refused so there is only one text the signature can cover.
 */
export function parseTimestampedHeader(header: string, name: string): { timestampText: string | undefined; v1: string[] } {
  let timestampText: string | undefined;
  let timestampSeen = false;
  const v1: string[] = [];
  for (const item of header.split(',')) {
    if (item.trim() === '') continue;
    const eq = item.indexOf('=');
    // Space before a key (", v1=") is tolerated; values are taken exactly as sent, so a timestamp with
    // a stray space is malformed rather than quietly trimmed into a different text than was signed.
    const key = eq < 0 ? '' : item.slice(0, eq).trimStart();
    if (key === '') throw malformed(`${name}: expected key=value pairs`);
    const value = item.slice(eq + 1);
    if (key === 't') {
      if (timestampSeen) throw malformed(`${name}: more than one t=`);
      timestampSeen = true;
      timestampText = value;
    } else if (key === 'v1') {
      v1.push(value);
    }
  }
  return { timestampText, v1 };
}

/** A fresh delivery id such as `msg_2f0c…` (32 hex digits of randomness after the prefix). */
export function newDeliveryId(prefix: string): string {
  return prefix + randomUUID().replaceAll('-', '');
}

const BASE64_SECRET = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;

/**
 * `whsec_<base64>` or bare base64 → key bytes (the Standard Webhooks secret format). The error never
 * shows the secret.
 */
export function base64SecretKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (encoded.length === 0 || !BASE64_SECRET.test(encoded)) {
    throw new TekilError('CONFIG_INVALID', 'a base64 secret must be "whsec_" followed by base64, or bare base64');
  }
  return Buffer.from(encoded, 'base64');
}

const SECRET_HEADER = /signature|authorization|hmac|secret|token|cookie|api-key|apikey/i;

/** Headers that hold signatures or credentials: never stored with a delivery, whatever names them. */
export function isSecretHeader(name: string): boolean {
  return SECRET_HEADER.test(name);
}
