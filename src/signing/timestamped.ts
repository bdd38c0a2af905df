import {
  anySignatureMatches,
  bodyBytes,
  checkTolerance,
  decodeSignature,
  hmac,
  invalid,
  malformed,
  nowSeconds,
  parseTimestamp,
  parseTimestampedHeader,
  requireSecrets,
  requireSignatureLines,
} from './common.js';
import type { SignInput, VerifyInput } from './types.js';

/**
 * The `t=<unix>,v1=<hex>` family (Stripe, Paymos): HMAC-SHA256, hex, over `<t>.<raw body>`, keyed with
 * the whole secret string as UTF-8 (a `whsec_` prefix included — it is not base64-decoded).
 */

function mac(secret: string, timestampText: string, body: Buffer): Buffer {
  return hmac('sha256', secret, [timestampText, '.', body]);
}

/**
 * Verifies and returns the signed timestamp. Each line of a repeated header is a whole `t=…,v1=…`
 * of its own and is checked on its own; the first line that verifies wins, and when none does the
 * first line's failure is reported.
 */
export function verifyTimestamped(input: VerifyInput, header: string): number {
  requireSecrets(input.secrets);
  const lines = requireSignatureLines(input.headers, header);
  let firstFailure: unknown;
  for (const line of lines) {
    try {
      return verifyLine(input, header, line);
    } catch (err) {
      firstFailure ??= err;
    }
  }
  throw firstFailure;
}

function verifyLine(input: VerifyInput, header: string, text: string): number {
  const { timestampText, v1 } = parseTimestampedHeader(text, header);
  const timestamp = parseTimestamp(timestampText, `t= in ${header}`);
  if (v1.length === 0) throw malformed(`${header} holds no v1 signature`);
  const candidates = v1.map((s) => decodeSignature(s, 'hex')).filter((b): b is Buffer => b !== undefined);
  if (candidates.length === 0) throw malformed(`${header}: no v1 value is hex`);
  // timestampText is exactly the header's text, so the MAC covers what the sender signed.
  const expected = input.secrets.map((secret) => mac(secret, timestampText as string, input.body));
  if (!anySignatureMatches(expected, candidates)) throw invalid(header, candidates.length, expected.length);
  checkTolerance(timestamp, input.toleranceSec, input.now);
  return timestamp;
}

/** The header value: `t=…` followed by one `v1=` per secret. */
export function signTimestamped(input: SignInput): { value: string; timestamp: number } {
  requireSecrets(input.secrets);
  const timestamp = input.timestamp ?? nowSeconds();
  const body = bodyBytes(input.body);
  const t = String(timestamp);
  const parts = [`t=${t}`, ...input.secrets.map((secret) => `v1=${mac(secret, t, body).toString('hex')}`)];
  return { value: parts.join(','), timestamp };
}
