import type { TekilConfig } from '../config/schema.js';
import { forwardDefaultNetworks, type ForwardConfig } from '../config/source.js';
import { headerValue } from '../http/header-value.js';
import { HttpPoster } from '../http/post.js';
import { DestinationGuard } from '../http/destination-guard.js';
import { TekilError } from '../errors.js';
import { parseRetryAfter } from '../http/retry-after.js';
import { createStandardScheme } from '../signing/standard.js';
import type { InboxClaimedDelivery } from './claim-due-deliveries.js';
import { brokerKindOf } from '../destinations/broker-url.js';
import { BrokerPool } from '../destinations/pool.js';

export type ForwardOutcome = { ok: true; resultRef: string | null } | { ok: false; permanent: boolean; error: string; notBeforeMs?: number };

const scheme = createStandardScheme();

/**
 * Forwarding for one source: a guard that follows `sources.<name>.forward.allow_networks` and a
 * poster whose keep-alive connections every batch of this process shares. Built when the worker is
 * created, so a policy that cannot be built stops startup instead of failing batches.
 */
export class Forwarder {
  private readonly poster: HttpPoster;
  /** For a forward to a broker (docs/destinations.md): its connection, shared by every batch of this process. */
  private readonly brokers: BrokerPool | undefined;
  private readonly guard: DestinationGuard;

  /** Throws CONFIG_INVALID, naming the source's setting, when an allowed network is not one. */
  constructor(
    readonly source: string,
    readonly config: ForwardConfig,
    /** Longest Retry-After honoured (`worker.retry_after_max`); a longer one is cut to this. */
    private readonly retryAfterMaxMs: number,
    /** `sending.proxy`, when the forward block asks for it. */
    proxy?: string,
  ) {
    const guard = new DestinationGuard(config.allow_networks ?? forwardDefaultNetworks, { setting: ['sources', source, 'forward', 'allow_networks'] });
    this.guard = guard;
    this.poster = new HttpPoster({ guard, keepAliveTimeoutMs: 10_000, connections: 64, ...(proxy ? { proxy } : {}) });
    this.brokers = brokerKindOf(config.url) ? new BrokerPool() : undefined;
  }

  /** `traceparent`: the forward span's, sent on (tracing on only). */
  forward(delivery: InboxClaimedDelivery, traceparent?: string): Promise<ForwardOutcome> {
    if (this.brokers) return forwardToBroker(this.config, this.brokers, this.guard, delivery, traceparent);
    return forwardDelivery(this.config, this.poster, this.retryAfterMaxMs, delivery, traceparent);
  }

  /** Closes idle connections (and a broker's); with `abort`, also cuts requests still in flight. */
  async close(abort = false): Promise<void> {
    await Promise.all([this.poster.close(abort), this.brokers?.close()]);
  }
}

/** One Forwarder per source that forwards; throws CONFIG_INVALID when one cannot be built. */
export function createForwarders(config: TekilConfig): Map<string, Forwarder> {
  const forwarders = new Map<string, Forwarder>();
  for (const [name, source] of Object.entries(config.sources)) {
    if (!source.forward) continue;
    if (source.forward.proxy && !config.sending.proxy) {
      throw new TekilError('CONFIG_INVALID', `sources.${name}.forward.proxy: no sending.proxy is configured to forward through`, {
        hint: 'set sending: { proxy: "http://proxy:3128" }, or remove forward.proxy',
      });
    }
    forwarders.set(name, new Forwarder(name, source.forward, config.worker.retry_after_max, source.forward.proxy ? config.sending.proxy : undefined));
  }
  return forwarders;
}

/**
 * POSTs the raw body to the application: original content type, `Idempotency-Key`, the tekil ids,
 * and a Standard Webhooks signature (webhook-id is the idempotency key, so it is stable across
 * retries). Ids and types that are not plain ASCII are sent in the RFC 8187 form (see headerValue).
 * 2xx with its whole answer within the timeout is success; no redirect is followed (a 3xx is a
 * failure). Transient: timeouts, connection errors, 5xx, 408, 429 (with Retry-After, at most
 * `worker.retry_after_max`), 3xx.
 * Permanent: other 4xx, a destination the forward policy refuses, a request that cannot be built.
 */
/** The headers a forwarded delivery carries, over HTTP and to a broker alike. */
function forwardHeaders(config: ForwardConfig, delivery: InboxClaimedDelivery, body: Buffer, traceparent: string | undefined): Record<string, string> {
  const idempotencyKey = headerValue(`${delivery.source}:${delivery.event_id}`);
  const signature = scheme.sign({ body, secrets: [config.secret], id: idempotencyKey });
  const headers: Record<string, string> = {
    'content-type': delivery.content_type ?? 'application/octet-stream',
    'idempotency-key': idempotencyKey,
    'x-tekil-source': headerValue(delivery.source),
    'x-tekil-event-id': headerValue(delivery.event_id),
    'user-agent': 'tekil',
    ...signature,
  };
  if (delivery.resource_id) headers['x-tekil-resource-id'] = headerValue(delivery.resource_id);
  if (delivery.event_type) headers['x-tekil-event-type'] = headerValue(delivery.event_type);
  if (traceparent) headers.traceparent = traceparent;
  return headers;
}

/**
 * Publishes a verified delivery to the application's broker: the raw body, the same headers as over
 * HTTP (signature included), and `<source>:<event id>` as the message id, the broker's deduplication
 * key where it has one (JetStream's Nats-Msg-Id). Success is the broker's confirm, ack or entry id,
 * kept as the delivery's result reference; every failure is transient (retried on the source's ladder),
 * except a URL that cannot be read.
 */
async function forwardToBroker(
  config: ForwardConfig,
  pool: BrokerPool,
  guard: DestinationGuard,
  delivery: InboxClaimedDelivery,
  traceparent: string | undefined,
): Promise<ForwardOutcome> {
  const body = Buffer.from(delivery.body);
  const headers = forwardHeaders(config, delivery, body, traceparent);
  const { 'content-type': contentType = 'application/octet-stream', 'user-agent': _agent, ...rest } = headers;
  const result = await pool.publish(
    config.url,
    guard,
    { id: headers['idempotency-key']!, type: delivery.event_type ?? 'webhook', body, contentType, headers: rest },
    config.timeout,
  );
  if (result.ok) return { ok: true, resultRef: result.detail.slice(0, 255) };
  return { ok: false, permanent: result.unusable === true, error: `forward: ${result.error}` };
}

async function forwardDelivery(
  config: ForwardConfig,
  poster: HttpPoster,
  retryAfterMaxMs: number,
  delivery: InboxClaimedDelivery,
  traceparent: string | undefined,
): Promise<ForwardOutcome> {
  const body = Buffer.from(delivery.body);
  const headers = forwardHeaders(config, delivery, body, traceparent);

  // The answer's body is never stored (it may echo the payload): it is read to its end and dropped.
  const result = await poster.post({ url: config.url, headers, body, timeoutMs: config.timeout, keepBytes: 0 });
  if (!result.ok) {
    switch (result.failure) {
      case 'timeout':
        return { ok: false, permanent: false, error: `forward: no answer within ${config.timeout} ms` };
      case 'request':
        return { ok: false, permanent: true, error: `forward: request could not be built: ${result.error}` };
      case 'forbidden':
        return { ok: false, permanent: true, error: `forward: ${result.error}` };
      case 'network':
        return { ok: false, permanent: false, error: `forward: ${result.error}` };
    }
  }
  const status = result.statusCode;
  if (status >= 200 && status < 300) {
    const ref = result.headers['x-tekil-result-ref'];
    return { ok: true, resultRef: typeof ref === 'string' && ref !== '' ? ref.slice(0, 255) : null };
  }
  const error = `forward: HTTP ${status}`;
  if (status === 429) {
    const header = result.headers['retry-after'];
    const asked = parseRetryAfter(Array.isArray(header) ? header[0] : header);
    // A receiver may ask for a year; the operator's bound wins, as it does for sending.
    const notBeforeMs = asked === undefined ? undefined : Math.min(asked, retryAfterMaxMs);
    return notBeforeMs === undefined ? { ok: false, permanent: false, error } : { ok: false, permanent: false, error, notBeforeMs };
  }
  if (status >= 300 && status < 400) return { ok: false, permanent: false, error: `${error} (redirects are not followed)` };
  if (status >= 400 && status < 500 && status !== 408) return { ok: false, permanent: true, error };
  return { ok: false, permanent: false, error };
}
