import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TekilError } from '../errors.js';
import { createScheme, hmacSchemeOptions } from './index.js';
import type { IncomingHeaders, SignatureScheme } from './types.js';

/**
 * Properties every signature scheme holds, over generated input: whatever the headers and the body,
 * `verify` either accepts or throws a coded TekilError (never a TypeError, a RangeError from a
 * buffer, or anything uncoded); and it never accepts a signature made over other bytes, with another
 * secret, or a header value it did not itself make.
 */
const VERIFY_CODES = new Set([
  'SIGNATURE_MISSING',
  'SIGNATURE_MALFORMED',
  'SIGNATURE_INVALID',
  'TIMESTAMP_MISSING',
  'TIMESTAMP_MALFORMED',
  'TIMESTAMP_OUT_OF_TOLERANCE',
]);

const schemes: Array<[string, SignatureScheme]> = [
  ['standard', createScheme('standard')],
  ['stripe', createScheme('stripe')],
  ['paymos', createScheme('paymos')],
  ['github', createScheme('github')],
  ['shopify', createScheme('shopify')],
  [
    'hmac',
    createScheme(
      'hmac',
      hmacSchemeOptions.parse({
        signature_header: 'X-Sig',
        prefix: 'sha256=',
        separator: ',',
        signed_payload: '{timestamp}.{id}.{body}',
        timestamp_header: 'X-Ts',
        id_header: 'X-Id',
      }),
    ),
  ],
  ['hmac-base64', createScheme('hmac', hmacSchemeOptions.parse({ signature_header: 'X-Sig', encoding: 'base64', secret_encoding: 'base64' }))],
];

/** Secrets each scheme can be configured with (Standard Webhooks and base64 keys are base64 after `whsec_`). */
const secretOf = (name: string) =>
  name === 'standard' || name === 'hmac-base64'
    ? fc.uint8Array({ minLength: 8, maxLength: 48 }).map((b) => `whsec_${Buffer.from(b).toString('base64')}`)
    : fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 });

const headerValue = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.stringMatching(/^(v1,|t=\d{1,12},v1=|sha256=)?[A-Za-z0-9+/=,. -]{0,120}$/),
  fc.array(fc.string({ maxLength: 60 }), { maxLength: 3 }),
);
const bodyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }).map((b) => Buffer.from(b)),
  fc.json().map((j) => Buffer.from(j)),
);
const NOW = 1_764_000_000_000;

function outcome(scheme: SignatureScheme, body: Buffer, headers: IncomingHeaders, secrets: string[]): string {
  try {
    scheme.verify({ body, headers, secrets, toleranceSec: 300, now: NOW });
    return 'OK';
  } catch (err) {
    if (!(err instanceof TekilError)) throw new Error(`verify threw an uncoded ${String(err)}`, { cause: err });
    expect(VERIFY_CODES).toContain(err.code);
    return err.code;
  }
}

function signed(scheme: SignatureScheme, body: Buffer, secret: string, id: string): IncomingHeaders {
  return Object.fromEntries(Object.entries(scheme.sign({ body, secrets: [secret], id, timestamp: NOW / 1000 })).map(([k, v]) => [k.toLowerCase(), v]));
}

const RUNS = 150;

describe.each(schemes)('signature scheme %s under generated input', (name, scheme) => {
  it('any headers and body: accepted only when signed, else a coded error', () => {
    fc.assert(
      fc.property(
        bodyBytes,
        secretOf(name),
        fc.dictionary(
          fc.constantFrom(
            'webhook-id',
            'webhook-timestamp',
            'webhook-signature',
            'stripe-signature',
            'x-webhook-signature',
            'x-webhook-timestamp',
            'x-webhook-id',
            'x-hub-signature-256',
            'x-github-delivery',
            'x-shopify-hmac-sha256',
            'x-shopify-webhook-id',
            'x-sig',
            'x-ts',
            'x-id',
          ),
          headerValue,
        ),
        (body, secret, headers) => {
          expect(outcome(scheme, body, headers, [secret])).not.toBe('OK');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a signed request verifies; other bytes, another secret or any replaced header value never do', () => {
    fc.assert(
      fc.property(
        bodyBytes,
        secretOf(name),
        secretOf(name),
        fc.nat(),
        headerValue,
        fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
        (body, secret, other, pick, replacement, id) => {
          const headers = signed(scheme, body, secret, id);
          expect(outcome(scheme, body, headers, [secret])).toBe('OK');
          const flipped = Buffer.concat([body, Buffer.from(' ')]);
          expect(outcome(scheme, flipped, headers, [secret])).not.toBe('OK');
          if (other !== secret) expect(outcome(scheme, body, headers, [other])).not.toBe('OK');
          // Replacing the value of a header the signature rests on: refused unless the value is the same.
          const names = Object.keys(headers).filter((h) => !['content-type'].includes(h));
          const target = names[pick % names.length]!;
          if (JSON.stringify(replacement) !== JSON.stringify(headers[target])) {
            const changed = outcome(scheme, body, { ...headers, [target]: replacement }, [secret]);
            // A scheme may carry an id header it does not sign (GitHub's delivery id): changing it changes nothing signed.
            if (changed === 'OK') expect(signedHeaderNames(name)).not.toContain(target);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});

/** The headers whose value the signature covers or carries, per scheme. */
function signedHeaderNames(name: string): string[] {
  switch (name) {
    case 'standard':
      return ['webhook-id', 'webhook-timestamp', 'webhook-signature'];
    case 'stripe':
      return ['stripe-signature'];
    case 'hmac':
      return ['x-sig', 'x-ts', 'x-id'];
    case 'hmac-base64':
      return ['x-sig'];
    case 'paymos':
      return ['x-webhook-signature'];
    case 'github':
      return ['x-hub-signature-256'];
    case 'shopify':
      return ['x-shopify-hmac-sha256'];
    default:
      throw new Error(`no signed headers listed for ${name}`);
  }
}
