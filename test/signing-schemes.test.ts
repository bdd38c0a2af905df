import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSchemeOptions } from '../src/signing/hmac.js';
import type { ErrorCode } from '../src/errors.js';
import { isTekilError } from '../src/errors.js';
import { createScheme } from '../src/signing/index.js';

/** Behaviour particular to one scheme, beyond the shared attacks in signing-negative.test.ts. */

const NOW_SEC = 1_750_000_000;
const body = Buffer.from('{"event_id":"evt_42","event_type":"invoice.paid","data":{"invoice_id":"inv_7"}}');
const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

function codeOf(fn: () => unknown): ErrorCode | 'OK' {
  try {
    fn();
    return 'OK';
  } catch (err) {
    if (isTekilError(err)) return err.code;
    throw err;
  }
}

const standardAsHmac = hmacSchemeOptions.parse({
  signature_header: 'webhook-signature',
  encoding: 'base64',
  prefix: 'v1,',
  separator: ' ',
  signed_payload: '{id}.{timestamp}.{body}',
  timestamp_header: 'webhook-timestamp',
  id_header: 'webhook-id',
  secret_encoding: 'base64',
});

describe('scheme specifics', () => {
  it('standard: a bare base64 secret works like whsec_; a non-base64 secret is a configuration error', () => {
    const scheme = createScheme('standard');
    const raw = randomBytes(32).toString('base64');
    const headers = scheme.sign({ body, secrets: [`whsec_${raw}`], id: 'msg_1', timestamp: NOW_SEC });
    expect(scheme.verify({ body, headers, secrets: [raw], toleranceSec: 0 }).headerEventId).toBe('msg_1');
    expect(codeOf(() => scheme.verify({ body, headers, secrets: ['whsec_not base64!'], toleranceSec: 0 }))).toBe('CONFIG_INVALID');
  });

  it('standard: without webhook-id there is nothing to verify against → SIGNATURE_MALFORMED', () => {
    const scheme = createScheme('standard');
    const headers: Record<string, string> = scheme.sign({ body, secrets: [whsec()], id: 'msg_1' });
    delete headers['webhook-id'];
    expect(codeOf(() => scheme.verify({ body, headers, secrets: [whsec()], toleranceSec: 0 }))).toBe('SIGNATURE_MALFORMED');
  });

  it('stripe: a repeated t= is refused', () => {
    const scheme = createScheme('stripe');
    const secret = 'whsec_abc';
    const sig = createHmac('sha256', secret).update(`${NOW_SEC}.`).update(body).digest('hex');
    const header = `t=${NOW_SEC},t=${NOW_SEC},v1=${sig}`;
    expect(codeOf(() => scheme.verify({ body, headers: { 'stripe-signature': header }, secrets: [secret], toleranceSec: 0 }))).toBe('SIGNATURE_MALFORMED');
  });

  it('paymos: sign emits X-Webhook-Id and X-Webhook-Timestamp; verify returns the header id', () => {
    const scheme = createScheme('paymos');
    const headers = scheme.sign({ body, secrets: ['whsec_p'], id: 'evt_42', timestamp: NOW_SEC });
    expect(headers).toMatchObject({ 'X-Webhook-Id': 'evt_42', 'X-Webhook-Timestamp': String(NOW_SEC) });
    expect(headers['X-Webhook-Signature']).toMatch(/^t=1750000000,v1=[0-9a-f]{64}$/);
    const lowered = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(scheme.verify({ body, headers: lowered, secrets: ['whsec_p'], toleranceSec: 0 })).toEqual({ headerEventId: 'evt_42', timestamp: NOW_SEC });
  });

  it('headers given as arrays or with mixed-case names are read', () => {
    const scheme = createScheme('github');
    const secret = 's3cret';
    const sig = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(codeOf(() => scheme.verify({ body, headers: { 'X-Hub-Signature-256': sig }, secrets: [secret], toleranceSec: 0 }))).toBe('OK');
    expect(codeOf(() => scheme.verify({ body, headers: { 'x-hub-signature-256': ['sha256=00', sig] }, secrets: [secret], toleranceSec: 0 }))).toBe('OK');
  });

  it('hmac: options that cannot work are refused when the scheme is created', () => {
    const base = { signature_header: 'X-Sig' };
    expect(codeOf(() => createScheme('hmac'))).toBe('CONFIG_INVALID');
    expect(codeOf(() => createScheme('hmac', hmacSchemeOptions.parse({ ...base, signed_payload: '{timestamp}.{body}' })))).toBe('CONFIG_INVALID');
    expect(codeOf(() => createScheme('hmac', hmacSchemeOptions.parse({ ...base, signed_payload: '{id}{body}' })))).toBe('CONFIG_INVALID');
    expect(codeOf(() => createScheme('hmac', hmacSchemeOptions.parse({ ...base, signed_payload: '{nonce}{body}' })))).toBe('CONFIG_INVALID');
  });

  it('hmac: sha1 and sha512 with base64', () => {
    for (const algorithm of ['sha1', 'sha512'] as const) {
      const scheme = createScheme('hmac', hmacSchemeOptions.parse({ signature_header: 'X-Sig', algorithm, encoding: 'base64' }));
      const sig = createHmac(algorithm, 'k').update(body).digest('base64');
      expect(codeOf(() => scheme.verify({ body, headers: { 'x-sig': sig }, secrets: ['k'], toleranceSec: 300 }))).toBe('OK');
      expect(codeOf(() => scheme.verify({ body, headers: { 'x-sig': sig }, secrets: ['K'], toleranceSec: 300 }))).toBe('SIGNATURE_INVALID');
    }
  });

  it('hmac: the Standard Webhooks test vector verifies with a generic description', () => {
    const scheme = createScheme('hmac', standardAsHmac);
    const result = scheme.verify({
      body: Buffer.from('{"test": 2432232314}'),
      headers: {
        'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
        'webhook-timestamp': '1614265330',
        'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
      },
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      toleranceSec: 0,
    });
    expect(result).toEqual({ headerEventId: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330 });
  });
});

describe('hmac options in the configuration', () => {
  it('a template that cannot be verified is refused when the configuration loads, with its path', async () => {
    const { parseConfig } = await import('../src/config/load.js');
    const source = (hmac: object) => ({ sources: { x: { scheme: 'hmac', secrets: ['k'], hmac: { signature_header: 'X-Sig', ...hmac } } } });
    expect(() => parseConfig(source({ signed_payload: '{timestamp}.{body}' }))).toThrow(/sources\.x\.hmac: .*timestamp_header/);
    expect(() => parseConfig(source({ signed_payload: '{nonce}{body}' }))).toThrow(/unknown placeholder \{nonce\}/);
    expect(parseConfig(source({ signed_payload: '{timestamp}.{body}', timestamp_header: 'X-Ts' })).sources.x?.hmac?.timestamp_header).toBe('X-Ts');
  });
});
