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
import { RequestFields } from './request-fields.js';
import type { FieldDefaults, SignatureScheme, SignInput, VerifyInput, VerifyResult } from './types.js';

/** The generic `hmac` scheme, described from a provider's own documentation. */
export const hmacSchemeOptions = z
  .object({
    algorithm: z.enum(['sha256', 'sha1', 'sha512']).default('sha256'),
    /** The header the signature arrives in; or give `signature` to read it from elsewhere. */
    signature_header: z.string().min(1).optional(),
    /** Where the signature is: `header:<name>`, `form:<field>` or `body:<dotted.path>` (e.g. PayTR's `form:hash`). */
    signature: z
      .string()
      .regex(/^(header:[A-Za-z0-9-]+|form:[^\s]+|body:[^\s]+)$/, 'expected "header:<name>", "form:<field>" or "body:<dotted.path>"')
      .optional(),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    /** Text before the signature in the header, e.g. `sha256=`. */
    prefix: z.string().default(''),
    /** Several signatures in one header are split on this (none when absent). */
    separator: z.string().optional(),
    /**
     * What is signed: `{body}`, `{timestamp}`, `{id}`, request fields (`{form:merchant_oid}`,
     * `{body:data.id}`, `{header:X-Id}`) and secrets (`{secret:key}` is the key tried, any other name
     * one of the source's `named_secrets`), e.g. `{timestamp}.{body}`.
     */
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

type TemplatePart = { literal: string } | { field: 'body' | 'timestamp' | 'id' } | { locator: string } | { secret: string };

const PLACEHOLDER = /\{([A-Za-z_]+)(?::([^{}\s]+))?\}/g;

/**
 * `{timestamp}.{body}` → [timestamp, ".", body]; `{form:a}{secret:salt}` → [field a, secret salt].
 * Unknown placeholders are a configuration error.
 */
export function parseSignedPayload(template: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const [, kind, name] = match;
    let part: TemplatePart;
    if (name === undefined && (kind === 'body' || kind === 'timestamp' || kind === 'id')) part = { field: kind };
    else if (name !== undefined && (kind === 'form' || kind === 'body' || kind === 'header')) part = { locator: `${kind}:${name}` };
    else if (name !== undefined && kind === 'secret') part = { secret: name };
    else {
      throw new TekilError(
        'CONFIG_INVALID',
        `hmac.signed_payload: unknown placeholder ${match[0]} (use {body}, {timestamp}, {id}, {form:<field>}, {body:<path>}, {header:<name>}, {secret:<name>})`,
      );
    }
    if (match.index > last) parts.push({ literal: template.slice(last, match.index) });
    parts.push(part);
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ literal: template.slice(last) });
  return parts;
}

function usesField(parts: readonly TemplatePart[], field: 'body' | 'timestamp' | 'id'): boolean {
  return parts.some((p) => 'field' in p && p.field === field);
}

/** The named secrets a template signs (`{secret:salt}` → salt), the key itself left out. */
export function templateSecretNames(template: string): string[] {
  try {
    return parseSignedPayload(template).flatMap((p) => ('secret' in p && p.secret !== 'key' ? [p.secret] : []));
  } catch {
    return [];
  }
}

/** Where the signature is read from, as a locator (`header:X-Signature`, `form:hash`). */
function signatureLocator(options: HmacSchemeOptions): string | undefined {
  return options.signature ?? (options.signature_header === undefined ? undefined : `header:${options.signature_header}`);
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
  if (options.signature !== undefined && options.signature_header !== undefined) problems.push('hmac: give signature_header or signature, not both');
  if (options.signature === undefined && options.signature_header === undefined)
    problems.push('hmac: set signature_header (or signature: form:<field> / body:<path>)');
  const inBody = options.signature !== undefined && !options.signature.startsWith('header:');
  // The body cannot sign itself once the signature is written into it.
  if (inBody && usesField(parts, 'body'))
    problems.push('hmac.signed_payload uses {body}, but the signature is in the body: sign fields instead ({form:<field>}, {body:<path>})');
  if (inBody && (options.prefix !== '' || options.separator !== undefined)) problems.push('hmac: prefix and separator apply to a signature header only');
  if (usesField(parts, 'timestamp') && !options.timestamp_header) problems.push('hmac.signed_payload uses {timestamp}: set hmac.timestamp_header');
  if (usesField(parts, 'id') && !options.id_header) problems.push('hmac.signed_payload uses {id}: set hmac.id_header');
  if (options.separator === '') problems.push('hmac.separator must not be empty');
  return problems;
}

/** Writes a signature into a body: a form field appended (or replaced), or a top-level JSON key. */
function bodyWithSignature(body: Buffer, locator: string, signature: string): Buffer {
  if (locator.startsWith('form:')) {
    const form = new URLSearchParams(body.toString('utf8'));
    form.set(locator.slice('form:'.length), signature);
    return Buffer.from(form.toString());
  }
  const path = locator.slice('body:'.length);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', `the body must be a JSON object to carry the signature at ${path}`, { cause: err });
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json) || path.includes('.')) {
    throw new TekilError('VALIDATION_FAILED', `the signature can be written only at a top-level key of a JSON object (not ${path})`);
  }
  return Buffer.from(JSON.stringify({ ...(json as Record<string, unknown>), [path]: signature }));
}

export function createHmacScheme(options: HmacSchemeOptions | undefined): SignatureScheme {
  if (!options) throw new TekilError('CONFIG_INVALID', 'scheme "hmac" needs its options (signature_header, encoding, …)');
  const problems = hmacOptionProblems(options);
  if (problems.length) throw new TekilError('CONFIG_INVALID', problems.join('; '));
  const template = parseSignedPayload(options.signed_payload);
  const signsId = usesField(template, 'id');
  const where = signatureLocator(options) as string;
  const header = where.startsWith('header:') ? where.slice('header:'.length) : undefined;
  const keyOf = (secret: string): Buffer | string => (options.secret_encoding === 'base64' ? base64SecretKey(secret) : secret);

  /** A template's secret by name: `key` is the secret tried, any other a named secret of the source. */
  const secretPart = (name: string, key: string, named: Readonly<Record<string, string>> | undefined): string => {
    if (name === 'key') return key;
    const value = named?.[name];
    if (value === undefined) throw new TekilError('CONFIG_INVALID', `hmac.signed_payload signs {secret:${name}}: add it to the source's named_secrets`);
    return value;
  };

  /** The template's request fields, read once per request; a missing one makes the request unverifiable. */
  const fieldValues = (fields: RequestFields): Map<string, string> => {
    const values = new Map<string, string>();
    for (const p of template) {
      if (!('locator' in p) || values.has(p.locator)) continue;
      const value = fields.read(p.locator);
      if (value === undefined) throw malformed(`the signed field ${p.locator} is missing (or sent more than once)`);
      values.set(p.locator, value);
    }
    return values;
  };

  const mac = (
    secret: string,
    named: VerifyInput['namedSecrets'],
    body: Buffer,
    timestampText: string,
    id: string,
    values: ReadonlyMap<string, string>,
  ): Buffer => {
    const parts: PayloadPart[] = template.map((p) => {
      if ('literal' in p) return p.literal;
      if ('locator' in p) return values.get(p.locator) as string;
      if ('secret' in p) return secretPart(p.secret, secret, named);
      if (p.field === 'body') return body;
      return p.field === 'timestamp' ? timestampText : id;
    });
    return hmac(options.algorithm, keyOf(secret), parts);
  };

  /** The signature candidates: header lines split and prefixed, or the one body field. */
  const candidatesOf = (input: VerifyInput, fields: RequestFields): Buffer[] => {
    let entries: string[];
    if (header !== undefined) {
      const lines = requireSignatureLines(input.headers, header);
      entries = lines
        .flatMap((line) => (options.separator === undefined ? [line] : line.split(options.separator)))
        .map((s) => s.trim())
        .filter((s) => s.startsWith(options.prefix));
      if (entries.length === 0) throw malformed(`${header} holds no signature${options.prefix ? ` starting with "${options.prefix}"` : ''}`);
    } else {
      const value = fields.read(where);
      if (value === undefined || value === '') throw new TekilError('SIGNATURE_MISSING', `missing ${where} (or sent more than once)`);
      entries = [value];
    }
    const candidates = entries.map((s) => decodeSignature(s.slice(options.prefix.length), options.encoding)).filter((b): b is Buffer => b !== undefined);
    if (candidates.length === 0) throw malformed(`${header ?? where}: no signature is ${options.encoding}`);
    return candidates;
  };

  const defaults: FieldDefaults = {
    event_id: [...(options.id_header ? [`header:${options.id_header.toLowerCase()}`] : []), 'body:id', 'body:event_id'],
    resource_id: ['body:data.id', 'body:data.object.id'],
    event_type: ['body:type', 'body:event_type'],
    occurred_at: ['body:occurred_at', 'body:created_at'],
  };

  const signatures = (input: SignInput, body: Buffer, timestampText: string, id: string): string[] => {
    requireSecrets(input.secrets);
    const values = fieldValues(new RequestFields(body, {}));
    // Without a separator the signature is one value, so only the first secret signs.
    const secrets = options.separator === undefined ? input.secrets.slice(0, 1) : input.secrets;
    return secrets.map((secret) => options.prefix + mac(secret, input.namedSecrets, body, timestampText, id, values).toString(options.encoding));
  };

  return {
    name: 'hmac',
    ...(options.id_header ? { idHeader: options.id_header } : {}),
    defaults,
    verify(input) {
      requireSecrets(input.secrets);
      const fields = new RequestFields(input.body, input.headers);
      const candidates = candidatesOf(input, fields);

      const result: VerifyResult = {};
      let timestampText = '';
      if (options.timestamp_header) {
        timestampText = getHeader(input.headers, options.timestamp_header) ?? '';
        result.timestamp = parseTimestamp(timestampText, options.timestamp_header);
      }
      const id = options.id_header ? getHeader(input.headers, options.id_header) : undefined;
      if (signsId && !id) throw malformed(`missing ${options.id_header} header (it is part of the signed content)`);
      if (id) result.headerEventId = id;

      const values = fieldValues(fields);
      const expected = input.secrets.map((secret) => mac(secret, input.namedSecrets, input.body, timestampText, id ?? '', values));
      if (!anySignatureMatches(expected, candidates)) throw invalid(header ?? where, candidates.length, expected.length);
      if (result.timestamp !== undefined) checkTolerance(result.timestamp, input.toleranceSec, input.now);
      return result;
    },
    sign(input) {
      const body = bodyBytes(input.body);
      const timestampText = String(input.timestamp ?? nowSeconds());
      const id = input.id ?? (options.id_header ? newDeliveryId('msg_') : '');
      const headers: Record<string, string> = {};
      if (options.id_header) headers[options.id_header] = id;
      if (options.timestamp_header) headers[options.timestamp_header] = timestampText;
      if (header !== undefined) headers[header] = signatures(input, body, timestampText, id).join(options.separator ?? '');
      else requireSecrets(input.secrets);
      return headers;
    },
    ...(header === undefined
      ? {
          signBody(input: SignInput): Buffer {
            const body = bodyBytes(input.body);
            const [signature] = signatures(input, body, String(input.timestamp ?? nowSeconds()), input.id ?? '');
            return bodyWithSignature(body, where, signature as string);
          },
        }
      : {}),
  };
}
