import { z } from 'zod';

export const schemeNames = ['standard', 'stripe', 'github', 'shopify', 'paymos', 'hmac'] as const;
export type SchemeName = (typeof schemeNames)[number];

/**
 * Where a value lives in a request: `body:<dotted.path>` in the parsed JSON body, or
 * `header:<name>` (case-insensitive).
 */
export const locator = z
  .string()
  .regex(/^(body:[^\s]+|header:[A-Za-z0-9-]+)$/, 'expected "body:<dotted.path>" or "header:<name>"');
const locatorList = z.union([locator, z.array(locator).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));

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

export const sourceSchema = z
  .object({
    scheme: z.enum(schemeNames),
    secrets: z.array(z.string().min(1, 'a secret must not be empty')).min(1, 'expected at least one secret'),
    /** Seconds either side of now a signed timestamp may be; 0 disables the check. */
    tolerance: z.number().int().nonnegative().default(300),
    hmac: hmacSchemeOptions.optional(),
    event_id: locatorList.optional(),
    resource_id: locatorList.optional(),
    event_type: locatorList.optional(),
    occurred_at: locatorList.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.scheme === 'hmac' && !s.hmac) {
      ctx.addIssue({ code: 'custom', path: ['hmac'], message: 'scheme "hmac" needs an "hmac" block (signature_header, encoding, …)' });
    }
  });
export type SourceConfig = z.infer<typeof sourceSchema>;
