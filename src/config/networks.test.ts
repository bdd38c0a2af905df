import { describe, expect, it } from 'vitest';
import { isTekilError } from '../errors.js';
import { parseConfig } from './load.js';

const source = (allowNetworks: unknown) => ({
  sources: {
    shop: {
      scheme: 'standard',
      secrets: ['whsec_dGVzdA=='],
      forward: { url: 'http://127.0.0.1:3000/hooks', secret: 'whsec_dGVzdA==', allow_networks: allowNetworks },
    },
  },
});

/** The configuration error parseConfig throws, as its message (fails when it does not throw CONFIG_INVALID). */
function refusal(input: unknown): string {
  try {
    parseConfig(input, {});
  } catch (err) {
    if (isTekilError(err, 'CONFIG_INVALID')) return err.message;
    throw err;
  }
  throw new Error('the configuration loaded');
}

describe('allow_networks: each entry is a real network in CIDR form', () => {
  const bad = ['10.0.0.0/33', '300.1.1.1/8', '::1/200', '10.0.0.0', '10.0.0.0/', '10.0.0.0/-1', 'fe80::1%eth0/64', 'localhost/8', '1.2.3.4/08x'];

  it.each(bad)('sources.<name>.forward.allow_networks refuses %s, naming the key', (network) => {
    const message = refusal(source(['127.0.0.0/8', network]));
    expect(message).toContain('sources.shop.forward.allow_networks.1:');
    expect(message).toContain(`"${network}"`);
  });

  it.each(bad)('sending.allow_networks refuses %s, naming the key', (network) => {
    const message = refusal({ sending: { allow_networks: [network] } });
    expect(message).toContain('sending.allow_networks.0:');
    expect(message).toContain(`"${network}"`);
  });

  it('says what is wrong with a prefix that is too long', () => {
    expect(refusal({ sending: { allow_networks: ['10.0.0.0/33'] } })).toMatch(/prefix .*at most 32/);
    expect(refusal({ sending: { allow_networks: ['::1/200'] } })).toMatch(/prefix .*at most 128/);
  });

  it('accepts IPv4 and IPv6 networks at every valid prefix length', () => {
    const good = ['0.0.0.0/0', '10.0.0.0/8', '192.168.1.7/32', '::/0', '::1/128', 'fc00::/7', '::ffff:10.0.0.0/104', 'FE80::/10'];
    expect(parseConfig({ sending: { allow_networks: good } }, {}).sending.allow_networks).toEqual(good);
    expect(parseConfig(source(good), {}).sources['shop']!.forward!.allow_networks).toEqual(good);
  });
});
