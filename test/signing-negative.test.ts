import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { HmacSchemeOptions } from '../src/signing/hmac.js';
import { hmacSchemeOptions } from '../src/signing/hmac.js';
import type { ErrorCode } from '../src/errors.js';
import { isTekilError } from '../src/errors.js';
import { createScheme } from '../src/signing/index.js';
import type { IncomingHeaders, SignatureScheme, VerifyInput } from '../src/signing/index.js';

/**
 * The same attacks against every scheme. Signatures are computed here with node:crypto straight from
 * each format's definition (not with tekil's `sign`), so a wrong `verify` cannot agree with itself.
 */

interface SchemeCase {
  label: string;
  scheme: SignatureScheme;
  secret: () => string;
  /** The encoded MAC (no prefix) over `body` for this format. */
  mac(secret: string, body: Buffer, timestampText: string, id: string): string;
  /** Request headers carrying these encoded signatures. */
  headers(signatures: string[], timestampText: string, id: string): IncomingHeaders;
  signatureHeader: string;
  timestamped: boolean;
  /** A header value holding a correct signature under a version/prefix this scheme does not accept. */
  wrongVersion?: (signature: string, timestampText: string) => string;
}

const hmacOf = (alg: string, key: Buffer | string, parts: (string | Buffer)[]) => {
  const h = createHmac(alg, key);
  for (const p of parts) h.update(p);
  return h.digest();
};

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const plain = () => randomBytes(24).toString('hex');
const standardKey = (s: string) => Buffer.from(s.slice('whsec_'.length), 'base64');

const slackLike: HmacSchemeOptions = hmacSchemeOptions.parse({
  signature_header: 'X-Slack-Signature',
  prefix: 'v0=',
  signed_payload: 'v0:{timestamp}:{body}',
  timestamp_header: 'X-Slack-Request-Timestamp',
});
const standardAsHmac: HmacSchemeOptions = hmacSchemeOptions.parse({
  signature_header: 'webhook-signature',
  encoding: 'base64',
  prefix: 'v1,',
  separator: ' ',
  signed_payload: '{id}.{timestamp}.{body}',
  timestamp_header: 'webhook-timestamp',
  id_header: 'webhook-id',
  secret_encoding: 'base64',
});

const cases: SchemeCase[] = [
  {
    label: 'standard',
    scheme: createScheme('standard'),
    secret: whsec,
    mac: (s, b, t, id) => hmacOf('sha256', standardKey(s), [`${id}.${t}.`, b]).toString('base64'),
    headers: (sigs, t, id) => ({ 'webhook-id': id, 'webhook-timestamp': t, 'webhook-signature': sigs.map((s) => `v1,${s}`).join(' ') }),
    signatureHeader: 'webhook-signature',
    timestamped: true,
    wrongVersion: (sig) => `v2,${sig}`,
  },
  {
    label: 'stripe',
    scheme: createScheme('stripe'),
    secret: () => `whsec_${plain()}`,
    mac: (s, b, t) => hmacOf('sha256', s, [`${t}.`, b]).toString('hex'),
    headers: (sigs, t) => ({ 'stripe-signature': [`t=${t}`, ...sigs.map((s) => `v1=${s}`)].join(',') }),
    signatureHeader: 'stripe-signature',
    timestamped: true,
    wrongVersion: (sig, t) => `t=${t},v0=${sig}`,
  },
  {
    label: 'paymos',
    scheme: createScheme('paymos'),
    secret: () => `whsec_${plain()}`,
    mac: (s, b, t) => hmacOf('sha256', s, [`${t}.`, b]).toString('hex'),
    headers: (sigs, t, id) => ({ 'x-webhook-id': id, 'x-webhook-timestamp': t, 'x-webhook-signature': [`t=${t}`, ...sigs.map((s) => `v1=${s}`)].join(',') }),
    signatureHeader: 'x-webhook-signature',
    timestamped: true,
    wrongVersion: (sig, t) => `t=${t},v2=${sig}`,
  },
  {
    label: 'github',
    scheme: createScheme('github'),
    secret: plain,
    mac: (s, b) => hmacOf('sha256', s, [b]).toString('hex'),
    headers: (sigs, _t, id) => ({ 'x-github-delivery': id, 'x-hub-signature-256': sigs.map((s) => `sha256=${s}`).join(', ') }),
    signatureHeader: 'x-hub-signature-256',
    timestamped: false,
    wrongVersion: (sig) => `sha1=${sig}`,
  },
  {
    label: 'shopify',
    scheme: createScheme('shopify'),
    secret: plain,
    mac: (s, b) => hmacOf('sha256', s, [b]).toString('base64'),
    headers: (sigs, _t, id) => ({ 'x-shopify-webhook-id': id, 'x-shopify-hmac-sha256': sigs.join(', ') }),
    signatureHeader: 'x-shopify-hmac-sha256',
    timestamped: false,
  },
  {
    label: 'hmac (Slack-style v0=, timestamp header)',
    scheme: createScheme('hmac', slackLike),
    secret: plain,
    mac: (s, b, t) => hmacOf('sha256', s, [`v0:${t}:`, b]).toString('hex'),
    headers: (sigs, t) => ({ 'x-slack-request-timestamp': t, 'x-slack-signature': sigs.map((s) => `v0=${s}`).join('') }),
    signatureHeader: 'x-slack-signature',
    timestamped: true,
    wrongVersion: (sig) => `v1=${sig}`,
  },
  {
    label: 'hmac (Standard Webhooks described generically)',
    scheme: createScheme('hmac', standardAsHmac),
    secret: whsec,
    mac: (s, b, t, id) => hmacOf('sha256', standardKey(s), [`${id}.${t}.`, b]).toString('base64'),
    headers: (sigs, t, id) => ({ 'webhook-id': id, 'webhook-timestamp': t, 'webhook-signature': sigs.map((s) => `v1,${s}`).join(' ') }),
    signatureHeader: 'webhook-signature',
    timestamped: true,
    wrongVersion: (sig) => `v2,${sig}`,
  },
];

const NOW_SEC = 1_750_000_000;
const TOLERANCE = 300;
const body = Buffer.from('{"event_id":"evt_42","event_type":"invoice.paid","data":{"invoice_id":"inv_7"}}');

function codeOf(fn: () => unknown): ErrorCode | 'OK' {
  try {
    fn();
    return 'OK';
  } catch (err) {
    if (isTekilError(err)) return err.code;
    throw err;
  }
}

/** Multi-signature headers are only meaningful where the format can carry several. */
const carriesSeveral = (c: SchemeCase) => c.label !== 'hmac (Slack-style v0=, timestamp header)';

describe.each(cases)('$label', (c) => {
  const secret = c.secret();
  const id = 'evt_42';
  const t = String(NOW_SEC);
  const good = c.mac(secret, body, t, id);
  const input = (headers: IncomingHeaders, over: Partial<VerifyInput> = {}): VerifyInput => ({
    body,
    headers,
    secrets: [secret],
    toleranceSec: TOLERANCE,
    now: NOW_SEC * 1000,
    ...over,
  });
  const verify = (headers: IncomingHeaders, over: Partial<VerifyInput> = {}) => codeOf(() => c.scheme.verify(input(headers, over)));
  const withSignatureHeader = (value: string) => ({ ...c.headers([good], t, id), [c.signatureHeader]: value });

  it('accepts the correct signature', () => {
    const result = c.scheme.verify(input(c.headers([good], t, id)));
    if (c.timestamped) expect(result.timestamp).toBe(NOW_SEC);
    else expect(result.timestamp).toBeUndefined();
  });

  it('missing or blank signature header → SIGNATURE_MISSING', () => {
    const headers = c.headers([good], t, id);
    delete headers[c.signatureHeader];
    expect(verify(headers)).toBe('SIGNATURE_MISSING');
    expect(verify(withSignatureHeader(''))).toBe('SIGNATURE_MISSING');
  });

  it('truncated signature → no match (whole units) or malformed (broken encoding)', () => {
    expect(verify(c.headers([good.slice(0, -4)], t, id))).toBe('SIGNATURE_INVALID');
    expect(verify(c.headers([good.slice(0, -1)], t, id))).toBe('SIGNATURE_MALFORMED');
  });

  it.skipIf(!c.wrongVersion)('a correct signature under the wrong version → SIGNATURE_MALFORMED', () => {
    expect(verify(withSignatureHeader(c.wrongVersion?.(good, t) ?? ''))).toBe('SIGNATURE_MALFORMED');
  });

  it('garbage → SIGNATURE_MALFORMED', () => {
    expect(verify(withSignatureHeader('garbage!!'))).toBe('SIGNATURE_MALFORMED');
  });

  it('decoys only → SIGNATURE_INVALID; the right one among decoys → accepted', () => {
    const decoys = [1, 2, 3].map(() => c.mac(c.secret(), body, t, id));
    const several = carriesSeveral(c);
    expect(verify(c.headers(several ? decoys : decoys.slice(0, 1), t, id))).toBe('SIGNATURE_INVALID');
    if (several) expect(verify(c.headers([decoys[0] as string, good, decoys[1] as string], t, id))).toBe('OK');
  });

  it('right signature, wrong secret → SIGNATURE_INVALID', () => {
    expect(verify(c.headers([good], t, id), { secrets: [c.secret()] })).toBe('SIGNATURE_INVALID');
  });

  it('one byte of the body changed → SIGNATURE_INVALID', () => {
    const changed = Buffer.from(body);
    changed[10] = (changed[10] as number) ^ 0x01;
    expect(verify(c.headers([good], t, id), { body: changed })).toBe('SIGNATURE_INVALID');
  });

  it('messages never carry the secret or the expected signature', () => {
    for (const headers of [c.headers([good], t, id), withSignatureHeader('garbage!!'), c.headers([good.slice(0, -4)], t, id)]) {
      try {
        c.scheme.verify(input(headers, { body: Buffer.from('tampered') }));
      } catch (err) {
        const text = `${(err as Error).message} ${JSON.stringify(err)}`;
        expect(text).not.toContain(secret);
        expect(text).not.toContain(good);
        expect(text).not.toContain(c.mac(secret, Buffer.from('tampered'), t, id));
      }
    }
  });

  it('rotation: a signature made with either of two secrets verifies; sign emits one per secret', () => {
    const next = c.secret();
    const byNext = c.mac(next, body, t, id);
    expect(verify(c.headers([good], t, id), { secrets: [next, secret] })).toBe('OK');
    expect(verify(c.headers([byNext], t, id), { secrets: [next, secret] })).toBe('OK');
    if (carriesSeveral(c)) {
      const signed = c.scheme.sign({ body, secrets: [secret, next], id, timestamp: NOW_SEC });
      const headers = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v]));
      expect(headers[c.signatureHeader]).toContain(good);
      expect(headers[c.signatureHeader]).toContain(byNext);
      expect(verify(headers, { secrets: [secret] })).toBe('OK');
      expect(verify(headers, { secrets: [next] })).toBe('OK');
      expect(verify(headers, { secrets: [c.secret()] })).toBe('SIGNATURE_INVALID');
    }
  });

  it('sign and verify agree (string and Buffer bodies)', () => {
    for (const b of [body, body.toString('utf8')]) {
      const headers = c.scheme.sign({ body: b, secrets: [secret], id, timestamp: NOW_SEC });
      expect(verify(headers)).toBe('OK');
    }
  });

  if (c.timestamped) {
    it('timestamp with junk → TIMESTAMP_MALFORMED even when the signature covers that exact text', () => {
      for (const junk of ['1700000000abc', '1e9', ' 17', '17 ', '+1750000000', '1750000000.5', '-17']) {
        expect([junk, verify(c.headers([c.mac(secret, body, junk, id)], junk, id), { toleranceSec: 0 })]).toEqual([junk, 'TIMESTAMP_MALFORMED']);
      }
    });

    it('missing timestamp → TIMESTAMP_MISSING', () => {
      expect(verify(c.headers([c.mac(secret, body, '', id)], '', id))).toBe('TIMESTAMP_MISSING');
    });

    it('outside the tolerance in either direction → TIMESTAMP_OUT_OF_TOLERANCE; the edges are inside', () => {
      for (const offset of [-TOLERANCE - 1, TOLERANCE + 1, -86_400, 86_400]) {
        const ts = String(NOW_SEC + offset);
        expect(verify(c.headers([c.mac(secret, body, ts, id)], ts, id))).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
      }
      for (const offset of [-TOLERANCE, TOLERANCE]) {
        const ts = String(NOW_SEC + offset);
        expect(verify(c.headers([c.mac(secret, body, ts, id)], ts, id))).toBe('OK');
      }
    });

    it('tolerance 0 accepts any well-formed timestamp', () => {
      for (const ts of ['1', '1000000000', String(NOW_SEC + 10 * 365 * 86_400)]) {
        expect(verify(c.headers([c.mac(secret, body, ts, id)], ts, id), { toleranceSec: 0 })).toBe('OK');
      }
    });

    it('the signature covers the timestamp text exactly as sent (leading zero is different text)', () => {
      expect(verify(c.headers([good], `0${t}`, id))).toBe('SIGNATURE_INVALID');
    });
  } else {
    it('has no signed timestamp: any age verifies', () => {
      expect(verify(c.headers([good], t, id), { now: 0 })).toBe('OK');
    });
  }
});
