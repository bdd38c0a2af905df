import { describe, expect, it } from 'vitest';
import { parseConfig } from './load.js';

const source = { scheme: 'paymos', secrets: ['s'] };

describe('retention settings', () => {
  it('keep everything unless configured', () => {
    const config = parseConfig({ sources: { a: source } });
    expect(config.retention).toMatchObject({ bodies: null, records: null, interval: 600_000, batch_size: 1000, batch_pause: 100 });
    expect(config.sending.retention).toEqual({ bodies: null, records: null });
    expect(config.sources.a!.retention).toBeUndefined();
  });

  it('reads durations per source and for the outbox; never is null', () => {
    const config = parseConfig({
      retention: { bodies: '7d', records: 'never' },
      sources: { a: { ...source, retention: { bodies: '30d', records: '400d' } } },
      sending: { retention: { bodies: '720h' } },
    });
    expect(config.sources.a!.retention).toEqual({ bodies: 30 * 86_400_000, records: 400 * 86_400_000 });
    expect(config.retention).toMatchObject({ bodies: 7 * 86_400_000, records: null });
    expect(config.sending.retention).toEqual({ bodies: 30 * 86_400_000, records: null });
  });

  it('refuses windows that would forget ids too early or delete records before their bodies', () => {
    expect(() => parseConfig({ sources: { a: { ...source, retention: { bodies: '12h' } } } })).toThrow(/sources\.a\.retention\.bodies: expected at least 1d/);
    expect(() => parseConfig({ sending: { retention: { bodies: '30d', records: '7d' } } })).toThrow(/records must be kept at least as long as bodies/);
    // Bodies kept until their records go: allowed.
    expect(parseConfig({ retention: { records: '30d' } }).retention).toMatchObject({ bodies: null, records: 30 * 86_400_000 });
    expect(() => parseConfig({ retention: { bodies: 'forever' } })).toThrow(/retention\.bodies/);
  });
});
