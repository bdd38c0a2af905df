import { TekilError } from '../errors.js';
import { z } from 'zod';
import {
  anySignatureMatches,
  base64SecretKey,
  bodyBytes,
  checkTolerance,
  decodeSignature,
  getHeader,
  hmac,
  invalid,
  malformed,
  newDeliveryId,
  nowSeconds,
  parseTimestamp,
  requireSecrets,
  requireSignatureLines,
  type PayloadPart,
} from './common.js';
import type { FieldDefaults, SignatureScheme, VerifyResult } from './types.js';

/** The generic `hmac` scheme, described from a provider's own documentation. */
export const hmacSchemeOptions = z
  .object({
    algorithm: z.enum(['sha256', 'sha1', 'sha512']).default('sha256'),
    signature_header: z.string().min(1),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    /** Text before the signature in the header, e.g. `sha256=`. */
    prefix: z.string().default(''),
    /** Several signatures in one header are split on this (none when absent). */
    separator: z.string().optional(),
    /** What is signed: `{body}`, `{timestamp}`, `{id}` placeholders, e.g. `{timestamp}.{body}`. */
    signed_payload: z.string().default('{body}'),
    timestamp_header: z.string().optional(),
    id_header: z.string().optional(),
    /** How the secret is turned into the key: as UTF-8 text, or base64 after an optional `whsec_`. */
    secret_encoding: z.enum(['utf8', 'base64']).default('utf8'),
  })
  .strict();
export type HmacSchemeOptions = z.infer<typeof hmacSchemeOptions>;


/**
 * The generic scheme: any "HMAC of some text, written in a header" format, described by its
 * HmacSchemeOptions (header, algorithm, encoding, prefix, separator, signed-payload template,
 * timestamp and id headers, secret encoding).
 */

type TemplatePart = { literal: string } | { field: 'body' | 'timestamp' | 'id' };

/** `{timestamp}.{body}` → [timestamp, ".", body]; unknown placeholders are a configuration error. */
export function parseSignedPayload(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  const placeholder = /\{([A-Za-z_]+)\}/g;
  let last = 0;
  for (const match of template.matchAll(placeholder)) {
    const field = match[1];
    if (field !== 'body' && field !== 'timestamp' && field !== 'id') {
      throw new TekilError('CONFIG_INVALID', `hmac.signed_payload: unknown placeholder {${field}} (use {body}, {timestamp}, {id})`);
    }
    if (match.index > last) parts.push({ literal: template.slice(last, match.index) });
    parts.push({ field });
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ literal: template.slice(last) });
  return parts;
}

function usesField(parts: readonly TemplatePart[], field: 'body' | 'timestamp' | 'id'): boolean {
  return parts.some((p) => 'field' in p && p.field === field);
}

/** Checks the options fit together; the same rules the configuration loader applies. */
export function hmacOptionProblems(options: HmacSchemeOptions): string[] {
  const problems: string[] = [];
  let parts: TemplatePart[] = [];
  try {
    parts = parseSignedPayload(options.signed_payload);
  } catch (err) {
    problems.push((err as Error).message);
  }
  if (usesField(parts, 'timestamp') && !options.timestamp_header) problems.push('hmac.signed_payload uses {timestamp}: set hmac.timestamp_header');
  if (usesField(parts, 'id') && !options.id_header) problems.push('hmac.signed_payload uses {id}: set hmac.id_header');
  if (options.separator === '') problems.push('hmac.separator must not be empty');
  return problems;
}

export function createHmacScheme(options: HmacSchemeOptions | undefined): SignatureScheme {
  if (!options) throw new TekilError('CONFIG_INVALID', 'scheme "hmac" needs its options (signature_header, encoding, …)');
  const problems = hmacOptionProblems(options);
  if (problems.length) throw new TekilError('CONFIG_INVALID', problems.join('; '));
  const template = parseSignedPayload(options.signed_payload);
  const signsId = usesField(template, 'id');
  const header = options.signature_header;
  const keyOf = (secret: string): Buffer | string => (options.secret_encoding === 'base64' ? base64SecretKey(secret) : secret);

  const mac = (secret: string, body: Buffer, timestampText: string, id: string): Buffer => {
    const parts: PayloadPart[] = template.map((p) => {
      if ('literal' in p) return p.literal;
      if (p.field === 'body') return body;
      return p.field === 'timestamp' ? timestampText : id;
    });
    return hmac(options.algorithm, keyOf(secret), parts);
  };

  const defaults: FieldDefaults = {
    event_id: [...(options.id_header ? [`header:${options.id_header.toLowerCase()}`] : []), 'body:id', 'body:event_id'],
    resource_id: ['body:data.id', 'body:data.object.id'],
    event_type: ['body:type', 'body:event_type'],
    occurred_at: ['body:occurred_at', 'body:created_at'],
  };

  return {
    name: 'hmac',
    ...(options.id_header ? { idHeader: options.id_header } : {}),
    defaults,
    verify(input) {
      requireSecrets(input.secrets);
      const lines = requireSignatureLines(input.headers, header);
      const entries = lines
        .flatMap((line) => (options.separator === undefined ? [line] : line.split(options.separator)))
        .map((s) => s.trim())
        .filter((s) => s.startsWith(options.prefix));
      if (entries.length === 0) throw malformed(`${header} holds no signature${options.prefix ? ` starting with "${options.prefix}"` : ''}`);
      const candidates = entries
        .map((s) => decodeSignature(s.slice(options.prefix.length), options.encoding))
        .filter((b): b is Buffer => b !== undefined);
      if (candidates.length === 0) throw malformed(`${header}: no signature is ${options.encoding}`);

      const result: VerifyResult = {};
      let timestampText = '';
      if (options.timestamp_header) {
        timestampText = getHeader(input.headers, options.timestamp_header) ?? '';
        result.timestamp = parseTimestamp(timestampText, options.timestamp_header);
      }
      const id = options.id_header ? getHeader(input.headers, options.id_header) : undefined;
      if (signsId && !id) throw malformed(`missing ${options.id_header} header (it is part of the signed content)`);
      if (id) result.headerEventId = id;

      const expected = input.secrets.map((secret) => mac(secret, input.body, timestampText, id ?? ''));
      if (!anySignatureMatches(expected, candidates)) throw invalid(header, candidates.length, expected.length);
      if (result.timestamp !== undefined) checkTolerance(result.timestamp, input.toleranceSec, input.now);
      return result;
    },
    sign(input) {
      requireSecrets(input.secrets);
      const body = bodyBytes(input.body);
      const timestampText = String(input.timestamp ?? nowSeconds());
      const id = input.id ?? (options.id_header ? newDeliveryId('msg_') : '');
      // Without a separator the header holds one signature, so only the first secret signs.
      const secrets = options.separator === undefined ? input.secrets.slice(0, 1) : input.secrets;
      const signatures = secrets.map((secret) => options.prefix + mac(secret, body, timestampText, id).toString(options.encoding));
      const headers: Record<string, string> = {};
      if (options.id_header) headers[options.id_header] = id;
      if (options.timestamp_header) headers[options.timestamp_header] = timestampText;
      headers[header] = signatures.join(options.separator ?? '');
      return headers;
    },
  };
}

