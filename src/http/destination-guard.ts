import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { TekilError } from '../errors.js';
import { parseCidr } from './cidr.js';

/**
 * Refuses destinations on private, loopback, link-local and other non-public networks unless the
 * configuration allows them. The check runs on the address a connection actually uses (a custom DNS
 * lookup handed to the socket), so a name that resolves to a public address when an endpoint is created
 * and to 127.0.0.1 later (DNS rebinding) is still refused.
 */
const DENIED_V4 = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const;
const DENIED_V6 = [
  ['::', 128],
  ['::1', 128],
  ['::', 96], // IPv4-compatible (deprecated): ::127.0.0.1 is 127.0.0.1 to some stacks
  // ::ffff:0:0/96 (IPv4-mapped) is judged as the IPv4 address it carries (see ipv4Inside); a subnet
  // here would also catch every IPv4 address, which BlockList compares in that mapped form.
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['2002::', 16], // 6to4: carries an IPv4 address that may be private
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64 can reach private IPv4
  ['2001::', 32], // Teredo: tunnels to an IPv4 address (and port) that may be private
] as const;

/**
 * `localhost`, `*.localhost`, with or without the final dot: loopback by definition (RFC 6761), whatever
 * DNS says or fails to say, so judged as 127.0.0.1 without asking it. Ending in a dot, such a name
 * may not resolve when an endpoint is created, and yet reach loopback later.
 */
function isLocalhostName(host: string): boolean {
  return /(^|\.)localhost\.?$/i.test(host);
}
const LOOPBACK = '127.0.0.1';

export interface DestinationGuardOptions {
  /**
   * Where the allowing setting lives, key by key (`['sources', 'shop', 'forward', 'allow_networks']`),
   * named in refusals and their hint so the operator knows exactly what to change.
   * Default: `sending.allow_networks`.
   */
  setting?: readonly string[];
}

export class DestinationGuard {
  private readonly denied = new BlockList();
  private readonly allowed = new BlockList();
  private readonly setting: readonly string[];
  /** The networks allowed now, as given: a hint repeats them, since a list replaces the one in force. */
  private readonly allowNetworks: readonly string[];

  /** Throws CONFIG_INVALID, naming the setting, when an entry is not a network in CIDR form. */
  constructor(allowNetworks: readonly string[] = [], options: DestinationGuardOptions = {}) {
    this.setting = options.setting ?? ['sending', 'allow_networks'];
    this.allowNetworks = [...allowNetworks];
    for (const [net, prefix] of DENIED_V4) this.denied.addSubnet(net, prefix, 'ipv4');
    for (const [net, prefix] of DENIED_V6) this.denied.addSubnet(net, prefix, 'ipv6');
    for (const [i, cidr] of allowNetworks.entries()) {
      const network = parseCidr(cidr);
      if ('problem' in network) throw new TekilError('CONFIG_INVALID', `${this.setting.join('.')}.${i}: ${network.problem}`);
      this.allowed.addSubnet(network.address, network.prefix, network.family);
    }
  }

  /**
   * Names this guard let resolve to a non-public address (one its list allows), most recent last: a
   * request to one of them may have been answered from a private network (see reachesNonPublic).
   */
  private readonly nonPublicNames = new Set<string>();

  /** True when the address is on a private, loopback, link-local or other non-public network, allowed or not. */
  isNonPublic(address: string): boolean {
    const ip = ipv4Inside(address) ?? address;
    return this.denied.check(ip, isIP(ip) === 4 ? 'ipv4' : 'ipv6');
  }

  /**
   * True when a request this guard let through to `url` may have been answered from a non-public
   * address: an IP literal on such a network, a `localhost` name, or a name this guard has seen resolve
   * to one (remembered once seen, so a name switching between public and private answers stays marked).
   */
  reachesNonPublic(url: string): boolean {
    let host: string;
    try {
      host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return true;
    }
    if (isIP(host) !== 0) return this.isNonPublic(host);
    return isLocalhostName(host) || this.nonPublicNames.has(host.toLowerCase());
  }

  /** True when a connection to this IP address is allowed. */
  permits(address: string): boolean {
    // IPv4-mapped IPv6 (::ffff:10.0.0.1, ::ffff:a00:1) is judged as the IPv4 address it carries.
    const ip = ipv4Inside(address) ?? address;
    const type = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
    if (this.allowed.check(ip, type)) return true;
    return !this.denied.check(ip, type);
  }

  refusal(host: string, address: string): TekilError {
    const network = networkOf(address);
    // A list replaces the one in force (for forwarding, the default loopback and private networks),
    // so the suggested line repeats the networks allowed now: pasting it changes nothing else.
    const hint =
      this.allowNetworks.length === 0
        ? `to allow it, add to the configuration: ${configLine(this.setting, [network])}`
        : `to allow it, set in the configuration (a list replaces the networks allowed now, so this one repeats them): ${configLine(this.setting, [...this.allowNetworks, network])}`;
    return new TekilError(
      'FORBIDDEN_DESTINATION',
      `destination ${host} resolves to ${address}, a private, loopback or link-local address (allow it with ${this.setting.join('.')})`,
      { hint },
    );
  }

  private readonly literalVerdicts = new Map<string, boolean>();

  /** Throws FORBIDDEN_DESTINATION when the URL's host is an IP literal this guard refuses. */
  checkLiteral(url: URL): void {
    let allowed = this.literalVerdicts.get(url.hostname);
    if (allowed === undefined) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      allowed = isIP(host) === 0 || this.permits(host);
      if (this.literalVerdicts.size < 10_000) this.literalVerdicts.set(url.hostname, allowed);
    }
    if (!allowed) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      throw this.refusal(host, host);
    }
  }

  /** A DNS lookup for sockets that drops refused addresses and fails when none is left. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    if (isLocalhostName(hostname) && !this.permits(LOOPBACK)) {
      return callback(this.refusal(hostname, LOOPBACK) as TekilError & NodeJS.ErrnoException, '', 0);
    }
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const usable = addresses.filter((a) => this.permits(a.address));
      if (usable.some((a) => this.isNonPublic(a.address))) this.rememberNonPublic(hostname);
      if (usable.length === 0) {
        const refusal = this.refusal(hostname, addresses[0]?.address ?? '?') as TekilError & NodeJS.ErrnoException;
        return callback(refusal, '', 0);
      }
      if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      } else {
        callback(null, usable[0]!.address, usable[0]!.family);
      }
    });
  };

  private rememberNonPublic(hostname: string): void {
    const name = hostname.toLowerCase();
    this.nonPublicNames.delete(name);
    this.nonPublicNames.add(name);
    if (this.nonPublicNames.size > 10_000) this.nonPublicNames.delete(this.nonPublicNames.values().next().value!);
  }

  /**
   * Validates a destination URL when an endpoint is created or changed: http(s) only, and refused when
   * it is, or resolves only to, a forbidden address. A name that does not resolve yet is accepted: the
   * connect-time check still applies.
   */
  async checkUrl(text: string): Promise<URL> {
    let url: URL;
    try {
      url = new URL(text);
    } catch (err) {
      throw new TekilError('VALIDATION_FAILED', `"${text}" is not a URL`, { cause: err });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TekilError('VALIDATION_FAILED', `destination URL must be http or https, got ${url.protocol}`);
    }
    if (url.username || url.password) throw new TekilError('VALIDATION_FAILED', 'destination URL must not carry credentials');
    this.checkLiteral(url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return url;
    if (isLocalhostName(host) && !this.permits(LOOPBACK)) throw this.refusal(host, LOOPBACK);
    const addresses = await new Promise<LookupAddress[]>((resolve) => {
      dnsLookup(host, { all: true }, (err, found) => resolve(err ? [] : found));
    });
    if (addresses.length > 0 && !addresses.some((a) => this.permits(a.address))) throw this.refusal(host, addresses[0]!.address);
    return url;
  }
}

/** The IPv4 address inside an IPv4-mapped IPv6 address, in dotted or hexadecimal form. */
function ipv4Inside(address: string): string | undefined {
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted && isIP(address) === 6) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex || isIP(address) !== 6) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** `['sending', 'allow_networks']` + networks → `sending: { allow_networks: ["127.0.0.0/8"] }`, one YAML line. */
function configLine(setting: readonly string[], networks: readonly string[]): string {
  const keys = setting.map(yamlKey);
  let line = `${keys.pop()!}: [${networks.map((n) => JSON.stringify(n)).join(', ')}]`;
  while (keys.length > 0) line = `${keys.pop()!}: { ${line} }`;
  return line;
}

/** A key as YAML reads it back as the same string: plain when it can be, quoted otherwise (a source named `true` or `1e3`). */
function yamlKey(key: string): string {
  const plain = /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key) && !/^(true|false|null|yes|no|on|off|y|n)$/i.test(key);
  return plain ? key : JSON.stringify(key);
}

/** The narrowest sensible network to suggest allowing for a refused address. */
function networkOf(address: string): string {
  const ip = ipv4Inside(address) ?? address;
  const family = isIP(ip);
  if (family === 4) return ip.startsWith('127.') ? '127.0.0.0/8' : `${ip}/32`;
  return family === 6 ? `${ip}/128` : address;
}
