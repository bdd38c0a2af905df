import { Agent, request, errors as undiciErrors } from 'undici';
import type { ForwardConfig } from '../config/source.js';
import { createStandardScheme } from '../signing/standard.js';
import type { InboxClaimedDelivery as ClaimedDelivery } from './claim-due-deliveries.js';

export type ForwardOutcome =
  | { ok: true; resultRef: string | null }
  | { ok: false; permanent: boolean; error: string; notBeforeMs?: number };

const scheme = createStandardScheme();

/** Keep-alive connections to the application, shared by every batch of this process. */
export const forwardAgent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });

/**
 * POSTs the raw body to the application: original content type, `Idempotency-Key`, the tekil ids,
 * and a Standard Webhooks signature (webhook-id is the idempotency key, so it is stable across
 * retries). 2xx within the timeout is success; no redirect is followed (a 3xx is a failure).
 * Transient: timeouts, connection errors, 5xx, 408, 429 (with Retry-After), 3xx. Permanent: other 4xx.
 */
export async function forwardDelivery(config: ForwardConfig, delivery: ClaimedDelivery): Promise<ForwardOutcome> {
  const body = Buffer.from(delivery.body);
  const idempotencyKey = `${delivery.source}:${delivery.event_id}`;
  const signature = scheme.sign({ body, secrets: [config.secret], id: idempotencyKey });
  let res;
  try {
    res = await request(config.url, {
      method: 'POST',
      dispatcher: forwardAgent,
      headersTimeout: config.timeout,
      bodyTimeout: config.timeout,
      signal: AbortSignal.timeout(config.timeout),
      headers: {
        'content-type': delivery.content_type ?? 'application/octet-stream',
        'idempotency-key': idempotencyKey,
        'x-tekil-source': delivery.source,
        'x-tekil-event-id': delivery.event_id,
        ...(delivery.resource_id ? { 'x-tekil-resource-id': delivery.resource_id } : {}),
        ...(delivery.event_type ? { 'x-tekil-event-type': delivery.event_type } : {}),
        'user-agent': 'tekil',
        ...signature,
      },
      body,
    });
  } catch (err) {
    return { ok: false, permanent: false, error: describeNetworkError(err, config.timeout) };
  }
  // The response body is never stored (it may echo the payload); drain it to free the connection.
  await res.body.dump().catch(() => {});
  const status = res.statusCode;
  if (status >= 200 && status < 300) {
    const ref = res.headers['x-tekil-result-ref'];
    return { ok: true, resultRef: typeof ref === 'string' && ref !== '' ? ref.slice(0, 255) : null };
  }
  const error = `forward: HTTP ${status}`;
  if (status === 429) return { ok: false, permanent: false, error, ...retryAfter(res.headers['retry-after']) };
  if (status >= 300 && status < 400) return { ok: false, permanent: false, error: `${error} (redirects are not followed)` };
  if (status >= 400 && status < 500 && status !== 408) return { ok: false, permanent: true, error };
  return { ok: false, permanent: false, error };
}

function retryAfter(header: string | string[] | undefined): { notBeforeMs?: number } {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return {};
  if (/^\d+$/.test(value.trim())) return { notBeforeMs: Number(value.trim()) * 1000 };
  const at = Date.parse(value);
  return Number.isNaN(at) ? {} : { notBeforeMs: Math.max(0, at - Date.now()) };
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return `forward: no answer within ${timeoutMs} ms`;
  }
  return `forward: ${e.code ?? e.name ?? 'error'}: ${(e.message ?? '').slice(0, 200)}`;
}
