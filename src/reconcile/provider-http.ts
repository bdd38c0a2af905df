import { request } from 'undici';
import { TekilError } from '../errors.js';
import { parseRetryAfter } from '../http/retry-after.js';

/** How one adapter talks to its provider: retries and waits, from the source's reconcile block. */
export interface ProviderHttpOptions {
  maxRetries: number;
  /** Longest wait a 429's Retry-After (or a backoff) may impose. */
  maxWaitMs: number;
  timeoutMs: number;
  /** Told about each wait, so a run's log says why it is slow. */
  onWait?: (info: { url: string; status: number | 'network'; waitMs: number }) => void;
}

export interface ProviderResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A URL as messages and logs show it: without its query, which may carry a key or a cursor. */
function describeUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/**
 * One request to a provider's API, retried on 429 (after its Retry-After), 5xx and network errors
 * (after a doubling backoff), at most `maxRetries` times. Any other non-2xx fails at once: a wrong key
 * does not get better by asking again.
 */
export async function providerRequest(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  options: ProviderHttpOptions,
): Promise<ProviderResponse> {
  for (let attempt = 0; ; attempt++) {
    let status: number | 'network';
    let waitMs = Math.min(500 * 2 ** attempt, options.maxWaitMs);
    try {
      const res = await request(url, {
        method,
        headers: { accept: 'application/json', 'user-agent': 'tekil-reconcile', ...headers },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        let json: unknown = null;
        if (text.trim() !== '') {
          try {
            json = JSON.parse(text);
          } catch (err) {
            throw new TekilError('RECONCILE_PROVIDER_FAILED', `${describeUrl(url)} answered ${res.statusCode} with a body that is not JSON`, { cause: err });
          }
        }
        return { status: res.statusCode, headers: res.headers, json };
      }
      status = res.statusCode;
      if (status === 429) {
        const header = res.headers['retry-after'];
        const asked = parseRetryAfter(Array.isArray(header) ? header[0] : header);
        if (asked !== undefined && asked > options.maxWaitMs) {
          throw new TekilError(
            'RECONCILE_PROVIDER_FAILED',
            `${describeUrl(url)} asked to wait ${Math.ceil(asked / 1000)} s (Retry-After), more than max_wait`,
            {
              hint: 'the run resumes from its cursor next time; or raise reconcile.max_wait',
            },
          );
        }
        if (asked !== undefined) waitMs = asked;
      } else if (status < 500) {
        const options = status === 401 || status === 403 ? { hint: "check the source's reconcile credentials" } : {};
        throw new TekilError('RECONCILE_PROVIDER_FAILED', `${describeUrl(url)} answered ${status}: ${text.slice(0, 200)}`, options);
      }
      if (attempt >= options.maxRetries) {
        throw new TekilError('RECONCILE_PROVIDER_FAILED', `${describeUrl(url)} answered ${status} ${attempt + 1} times`);
      }
    } catch (err) {
      if (err instanceof TekilError) throw err;
      if (attempt >= options.maxRetries) {
        throw new TekilError('RECONCILE_PROVIDER_FAILED', `${describeUrl(url)} could not be reached: ${(err as Error).message}`, { cause: err });
      }
      status = 'network';
    }
    options.onWait?.({ url: describeUrl(url), status, waitMs });
    await sleep(waitMs);
  }
}
