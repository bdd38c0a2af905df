import { request } from 'undici';
import { TekilError } from '../errors.js';

/**
 * One request to a provider's payment lookup, with a deadline. No retry here: a confirm that cannot
 * read the payment is retried on the delivery's own ladder, a reconcile run resumes from its cursor.
 */
export async function lookupRequest(
  what: string,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  timeoutMs: number,
): Promise<unknown> {
  const where = `${what} (${new URL(url).origin}${new URL(url).pathname})`;
  let status: number;
  let text: string;
  try {
    const res = await request(url, {
      method: init.method,
      headers: { accept: 'application/json', 'user-agent': 'tekil-lookup', ...init.headers },
      ...(init.body === undefined ? {} : { body: init.body }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    throw new TekilError('PAYMENT_LOOKUP_FAILED', `${where} could not be reached: ${(err as Error).message}`, { cause: err });
  }
  if (status < 200 || status > 299) {
    const hint = status === 401 || status === 403 ? { hint: "check the lookup's credentials" } : {};
    throw new TekilError('PAYMENT_LOOKUP_FAILED', `${where} answered ${status}: ${text.slice(0, 200)}`, hint);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new TekilError('PAYMENT_LOOKUP_FAILED', `${where} answered ${status} with a body that is not JSON`, { cause: err });
  }
}

export const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A field the provider sends as text or as a number, as text. */
export function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}
