import { describe, expect, it } from 'vitest';
import { createHeaderPicker, isSecretHeader, locatorHeaders } from './headers.js';

describe('header subset', () => {
  it('keeps ids and types, never signatures or credentials, even when asked', () => {
    const pick = createHeaderPicker(['X-Custom-Id', 'X-Signature-Thing']);
    const kept = JSON.parse(
      pick({
        'content-type': 'application/json',
        'user-agent': 'ua',
        'x-custom-id': 'c1',
        'x-webhook-id': 'evt',
        'x-webhook-signature': 't=1,v1=ab',
        'x-signature-thing': 'sig',
        authorization: 'Bearer x',
        cookie: 'a=b',
        'x-other': 'dropped',
      }),
    );
    expect(kept).toEqual({ 'content-type': 'application/json', 'user-agent': 'ua', 'x-custom-id': 'c1', 'x-webhook-id': 'evt' });
  });

  it('joins a repeated header and skips absent ones', () => {
    const pick = createHeaderPicker();
    expect(JSON.parse(pick({ 'x-request-id': ['a', 'b'], 'user-agent': undefined }))).toEqual({ 'x-request-id': 'a, b' });
    expect(pick({})).toBe('{}');
  });

  it('names secret headers by what they hold', () => {
    for (const name of [
      'webhook-signature',
      'x-hub-signature-256',
      'x-shopify-hmac-sha256',
      'authorization',
      'x-api-key',
      'x-auth-token',
      'cookie',
      'x-client-secret',
    ]) {
      expect([name, isSecretHeader(name)]).toEqual([name, true]);
    }
    for (const name of ['webhook-id', 'content-type', 'x-github-event']) expect([name, isSecretHeader(name)]).toEqual([name, false]);
  });

  it("lists the headers a source's locators read", () => {
    expect(locatorHeaders([['header:X-Id', 'body:id'], undefined, ['header:x-type']])).toEqual(['X-Id', 'x-type']);
  });
});
