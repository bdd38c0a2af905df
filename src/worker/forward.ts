import { forwardDefaultNetworks, type ForwardConfig } from '../config/source.js';
import { headerValue } from '../http/header-value.js';
import { HttpPoster } from '../http/post.js';
import { DestinationGuard } from '../outbox/destination-guard.js';
import { parseRetryAfter } from '../outbox/ladders.js';
import { createStandardScheme } from '../signing/standard.js';
import type { InboxClaimedDelivery } from './claim-due-deliveries.js';

export type ForwardOutcome =
  | { ok: true; resultRef: string | null }
  | { ok: false; permanent: boolean; error: string; notBeforeMs?: number };

const scheme = createStandardScheme();

/**
 * One poster per forward configuration (its guard follows the source's `forward.allow_networks`),
 * with keep-alive connections shared by every batch of this process.
 */
const posters = new WeakMap<ForwardConfig, HttpPoster>();

function posterFor(config: ForwardConfig): HttpPoster {
  let poster = posters.get(config);
  if (!poster) {
    const guard = new DestinationGuard(config.allow_networks ?? forwardDefaultNetworks, { setting: 'forward.allow_networks' });
    poster = new HttpPoster({ guard, keepAliveTimeoutMs: 10_000, connections: 64 });
    posters.set(config, poster);
  }
  return poster;
}

/**
 * POSTs the raw body to the application: original content type, `Idempotency-Key`, the tekil ids,
 * and a Standard Webhooks signature (webhook-id is the idempotency key, so it is stable across
 * retries). Ids and types that are not plain ASCII are sent in the RFC 8187 form (see headerValue).
 * 2xx with its whole answer within the timeout is success; no redirect is followed (a 3xx is a
 * failure). Transient: timeouts, connection errors, 5xx, 408, 429 (with Retry-After), 3xx.
 * Permanent: other 4xx, a destination the forward policy refuses, a request that cannot be built.
 */
export async function forwardDelivery(config: ForwardConfig, delivery: InboxClaimedDelivery): Promise<ForwardOutcome> {
  const body = Buffer.from(delivery.body);
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

  // The answer's body is never stored (it may echo the payload): it is read to its end and dropped.
  const result = await posterFor(config).post({ url: config.url, headers, body, timeoutMs: config.timeout, keepBytes: 0 });
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
    const notBeforeMs = parseRetryAfter(Array.isArray(header) ? header[0] : header);
    return notBeforeMs === undefined ? { ok: false, permanent: false, error } : { ok: false, permanent: false, error, notBeforeMs };
  }
  if (status >= 300 && status < 400) return { ok: false, permanent: false, error: `${error} (redirects are not followed)` };
  if (status >= 400 && status < 500 && status !== 408) return { ok: false, permanent: true, error };
  return { ok: false, permanent: false, error };
}
