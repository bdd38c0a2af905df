import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { TekilError } from '../errors.js';
import type { DestinationGuard } from '../http/destination-guard.js';

/** The kinds of destination besides an HTTP URL: a message published to the merchant's own broker. */
export const brokerKinds = ['rabbitmq', 'nats', 'redis'] as const;
export type BrokerKind = (typeof brokerKinds)[number];
/** Every kind an endpoint (or a source's forward) may be. */
export const destinationKinds = ['http', ...brokerKinds] as const;
export type DestinationKind = (typeof destinationKinds)[number];

const KIND_OF_PROTOCOL: Readonly<Record<string, BrokerKind>> = { 'amqp:': 'rabbitmq', 'nats:': 'nats', 'redis:': 'redis' };
const DEFAULT_PORT: Readonly<Record<BrokerKind, number>> = { rabbitmq: 5672, nats: 4222, redis: 6379 };
/** The query parameters each kind reads; any other is refused, so a typo is not silently ignored. */
const PARAMETERS: Readonly<Record<BrokerKind, readonly string[]>> = {
  rabbitmq: ['exchange', 'routing_key'],
  nats: ['subject'],
  redis: ['stream', 'maxlen'],
};

/** A broker destination, read from its URL (docs/destinations.md). */
export interface BrokerDestination {
  kind: BrokerKind;
  host: string;
  port: number;
  username: string;
  password: string;
  /** RabbitMQ: the virtual host (the path, `/` when empty). */
  vhost: string;
  /** Redis: the database number (the path, 0 when empty). */
  db: number;
  /** RabbitMQ: the exchange (`''`: the default exchange, routing by queue name). */
  exchange: string;
  /** RabbitMQ: the routing key; NATS: the subject. Absent: the event type. */
  routingKey: string | undefined;
  subject: string | undefined;
  /** Redis: the stream XADD appends to, and its approximate cap (MAXLEN ~). */
  stream: string;
  maxlen: number | undefined;
}

/** The kind a stored URL names, by its scheme alone: a fast test made for every attempt. */
export function brokerKindOf(url: string): BrokerKind | undefined {
  const colon = url.indexOf(':');
  return colon > 0 ? KIND_OF_PROTOCOL[url.slice(0, colon + 1).toLowerCase()] : undefined;
}

/** The kind a URL's scheme names: `http` for http(s), undefined for a scheme no kind speaks. */
export function kindOfUrl(url: string): DestinationKind | undefined {
  const lower = url.slice(0, 8).toLowerCase();
  if (lower.startsWith('http://') || lower.startsWith('https://')) return 'http';
  return brokerKindOf(url);
}

const invalid = (message: string) => new TekilError('VALIDATION_FAILED', message, { hint: 'see docs/destinations.md' });

/** Reads a broker URL; throws VALIDATION_FAILED naming what is wrong (never the URL itself: it may carry a password). */
export function parseBrokerUrl(text: string): BrokerDestination {
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', 'the destination is not a URL', { cause: err, hint: 'see docs/destinations.md' });
  }
  const kind = KIND_OF_PROTOCOL[url.protocol];
  if (!kind) throw invalid(`a broker destination is amqp://, nats:// or redis://, got ${url.protocol}`);
  if (!url.hostname) throw invalid(`${url.protocol}// needs a host`);
  for (const key of url.searchParams.keys()) {
    if (!PARAMETERS[kind].includes(key)) throw invalid(`${kind}: unknown parameter "${key}" (expected ${PARAMETERS[kind].join(', ')})`);
  }
  const param = (key: string) => url.searchParams.get(key) ?? undefined;
  const path = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const maxlenText = param('maxlen');
  const maxlen = maxlenText === undefined ? undefined : Number(maxlenText);
  if (maxlen !== undefined && !(Number.isInteger(maxlen) && maxlen > 0)) throw invalid('redis: maxlen is a positive whole number');
  const db = kind === 'redis' && path !== '' ? Number(path) : 0;
  if (!Number.isInteger(db) || db < 0) throw invalid('redis: the path is a database number (redis://host:6379/0)');
  if (kind === 'nats' && path !== '') throw invalid('nats: the URL has no path; name the subject with ?subject=');
  if (kind === 'redis' && !param('stream')) throw invalid('redis: name the stream with ?stream=');
  const subject = param('subject');
  if (subject !== undefined && !/^[^\s*>]+$/.test(subject)) throw invalid('nats: a subject to publish to has no spaces and no wildcards (* >)');
  return {
    kind,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : DEFAULT_PORT[kind],
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    vhost: path === '' ? '/' : path,
    db,
    exchange: param('exchange') ?? '',
    routingKey: param('routing_key'),
    subject,
    stream: param('stream') ?? '',
    maxlen,
  };
}

/** The URL as it may be shown and stored in the clear: its password replaced by `***`. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    if (!url.password) return text;
    url.password = '***';
    return url.toString();
  } catch {
    return '(not a URL)';
  }
}

/**
 * The address to connect to: the host's addresses the guard allows (an IP literal is judged as it is),
 * the first one. Throws FORBIDDEN_DESTINATION when none is allowed, as an HTTP destination would.
 * Connecting to the address checked here, not the name again, leaves no room for a second answer.
 */
export async function allowedAddress(guard: DestinationGuard, host: string): Promise<string> {
  if (isIP(host) !== 0) {
    if (!guard.permits(host)) throw guard.refusal(host, host);
    return host;
  }
  return new Promise<string>((resolve, reject) => {
    guard.lookup(host, { all: true }, (err, addresses) => {
      if (err) return reject(err);
      const first = (addresses as unknown as LookupAddress[])[0];
      if (!first) return reject(new Error(`${host} has no address`));
      resolve(first.address);
    });
  });
}

/**
 * Validates a broker destination when an endpoint is created or changed: a URL tekil can publish to,
 * whose host is not (nor resolves only to) an address the guard refuses. A name that does not resolve
 * yet is accepted: the check at connect time still applies.
 */
export async function checkBrokerUrl(guard: DestinationGuard, text: string): Promise<BrokerDestination> {
  const destination = parseBrokerUrl(text);
  if (isIP(destination.host) !== 0) {
    if (!guard.permits(destination.host)) throw guard.refusal(destination.host, destination.host);
    return destination;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    dnsLookup(destination.host, { all: true }, (err, found) => resolve(err ? [] : found));
  });
  if (addresses.length > 0 && !addresses.some((a) => guard.permits(a.address))) throw guard.refusal(destination.host, addresses[0]!.address);
  return destination;
}
