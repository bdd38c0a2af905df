import { isIP } from 'node:net';

export interface Network {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * Reads a network in CIDR form (`10.0.0.0/8`, `fc00::/7`): an IP address node:net accepts, then a
 * prefix of at most 32 (IPv4) or 128 (IPv6) bits. Returns what is wrong as a sentence instead of
 * throwing, so configuration validation and the destination guard report the same problem.
 */
export function parseCidr(text: string): Network | { problem: string } {
  const slash = text.lastIndexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? '' : text.slice(slash + 1);
  const example = 'e.g. 10.0.0.0/8 or fc00::/7';
  if (slash < 0 || !/^\d{1,3}$/.test(prefixText)) return { problem: `"${text}" is not a network in CIDR form (address/prefix bits, ${example})` };
  // A zone (fe80::1%eth0) names an interface, not a network.
  const version = address.includes('%') ? 0 : isIP(address);
  if (version === 0) return { problem: `"${text}": "${address}" is not an IPv4 or IPv6 address (${example})` };
  const prefix = Number(prefixText);
  const most = version === 4 ? 32 : 128;
  if (prefix > most) return { problem: `"${text}": the prefix of an IPv${version} network is at most ${most} bits` };
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}
