import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { TekilError } from '../errors.js';

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
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64 can reach private IPv4
] as const;

/** The denied network (CIDR) an address falls in, so a refusal can name the exact line to allow it. */
function deniedNetworkOf(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const ip = mapped ? mapped[1]! : address;
  const family = isIP(ip);
  if (family === 0) return undefined;
  for (const [net, prefix] of family === 4 ? DENIED_V4 : DENIED_V6) {
    const one = new BlockList();
    one.addSubnet(net, prefix, family === 4 ? 'ipv4' : 'ipv6');
    if (one.check(ip, family === 4 ? 'ipv4' : 'ipv6')) return `${net}/${prefix}`;
  }
  return undefined;
}

export class DestinationGuard {
  private readonly denied = new BlockList();
  private readonly allowed = new BlockList();

  constructor(allowNetworks: readonly string[] = []) {
    for (const [net, prefix] of DENIED_V4) this.denied.addSubnet(net, prefix, 'ipv4');
    for (const [net, prefix] of DENIED_V6) this.denied.addSubnet(net, prefix, 'ipv6');
    for (const cidr of allowNetworks) {
      const [net, prefixText] = cidr.split('/') as [string, string];
      const family = isIP(net);
      if (family === 0) throw new TekilError('CONFIG_INVALID', `sending.allow_networks: "${cidr}" is not a network`);
      this.allowed.addSubnet(net, Number(prefixText), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** True when a connection to this IP address is allowed. */
  permits(address: string): boolean {
    // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const ip = mapped ? mapped[1]! : address;
    const type = isIP(ip) === 4 ? 'ipv4' : 'ipv6';
    if (this.allowed.check(ip, type)) return true;
    return !this.denied.check(ip, type);
  }

  refusal(host: string, address: string): TekilError {
    const network = deniedNetworkOf(address);
    return new TekilError(
      'FORBIDDEN_DESTINATION',
      `destination ${host} resolves to ${address}, a private, loopback or link-local address (allow it with sending.allow_networks)`,
      network === undefined ? undefined : { hint: `add "${network}" to sending.allow_networks in tekil.yaml` },
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
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const usable = addresses.filter((a) => this.permits(a.address));
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
    const addresses = await new Promise<LookupAddress[]>((resolve) => {
      dnsLookup(host, { all: true }, (err, found) => resolve(err ? [] : found));
    });
    if (addresses.length > 0 && !addresses.some((a) => this.permits(a.address))) throw this.refusal(host, addresses[0]!.address);
    return url;
  }
}
