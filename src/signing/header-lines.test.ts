import { describe, expect, it } from 'vitest';
import { createScheme, hmacSchemeOptions, type SchemeName } from './index.js';
import { isTekilError } from '../errors.js';
import type { HmacSchemeOptions } from './hmac.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_' + Buffer.from('a different secret entirely').toString('base64');

const withSeparator = hmacSchemeOptions.parse({ signature_header: 'X-Sig', prefix: 'sha256=', separator: ',' });
const withoutSeparator = hmacSchemeOptions.parse({
  signature_header: 'X-Sig',
  encoding: 'base64',
  timestamp_header: 'X-Ts',
  signed_payload: '{timestamp}.{body}',
});

const cases: Array<[string, SchemeName, HmacSchemeOptions | undefined, string]> = [
  ['standard', 'standard', undefined, 'webhook-signature'],
  ['stripe', 'stripe', undefined, 'stripe-signature'],
  ['paymos', 'paymos', undefined, 'x-webhook-signature'],
  ['github', 'github', undefined, 'x-hub-signature-256'],
  ['shopify', 'shopify', undefined, 'x-shopify-hmac-sha256'],
  ['hmac with a separator', 'hmac', withSeparator, 'x-sig'],
  ['hmac without a separator', 'hmac', withoutSeparator, 'x-sig'],
];

/** Lower-cased names, as Node delivers them. */
function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

describe('a signature header sent on two lines', () => {
  const body = Buffer.from('{"id":"evt_1","type":"t"}');
  const timestamp = Math.floor(Date.now() / 1000);

  it.each(cases)('%s: verifies with the valid line first or second, refuses two wrong lines', (_name, scheme, options, header) => {
    const s = createScheme(scheme, options);
    const good = lower(s.sign({ body, secrets: [SECRET], id: 'msg_1', timestamp }));
    const bad = lower(s.sign({ body, secrets: [OTHER], id: 'msg_1', timestamp }));
    const verify = (lines: string[]) => s.verify({ body, headers: { ...good, [header]: lines }, secrets: [SECRET], toleranceSec: 300 });
    expect(() => verify([good[header]!, bad[header]!])).not.toThrow();
    expect(() => verify([bad[header]!, good[header]!])).not.toThrow();
    let code = 'none';
    try {
      verify([bad[header]!, bad[header]!]);
    } catch (err) {
      code = isTekilError(err) ? err.code : 'other';
    }
    expect(code).toBe('SIGNATURE_INVALID');
  });
});
