import { describe, expect, it } from 'vitest';
import { decodeHeaderValue, headerValue } from './header-value.js';

describe('header values', () => {
  it('sends plain visible ASCII unchanged', () => {
    for (const v of ['invoice.paid', 'inv_42', 'shop:evt_1', 'a b', 'x%20y', "it's"]) expect(headerValue(v)).toBe(v);
  });

  it('encodes UTF-8, control characters, edge spaces and the prefix itself in the RFC 8187 form', () => {
    expect(headerValue('sipariş.ödendi')).toBe("UTF-8''sipari%C5%9F.%C3%B6dendi");
    expect(headerValue('müşteri-42')).toBe("UTF-8''m%C3%BC%C5%9Fteri-42");
    expect(headerValue('a\r\nX-Injected: 1')).toBe("UTF-8''a%0D%0AX-Injected%3A%201");
    expect(headerValue(' padded')).toBe("UTF-8''%20padded");
    expect(headerValue('')).toBe("UTF-8''");
    expect(headerValue("UTF-8''abc")).toBe("UTF-8''UTF-8%27%27abc");
  });

  it('round-trips through decodeHeaderValue', () => {
    for (const v of ['sipariş.ödendi', 'müşteri-42', 'a\r\nb', "UTF-8''abc", 'plain', '日本語 🎉', '']) {
      const sent = headerValue(v);
      expect(sent).toMatch(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/);
      expect(decodeHeaderValue(sent)).toBe(v);
    }
  });
});
