import { isSecretHeader } from '../signing/common.js';
import type { IncomingHeaders } from '../signing/types.js';

/**
 * Headers worth keeping with a delivery: what it is, who sent it, and the provider's own ids.
 * Signatures and credentials are never stored, even when a locator names them.
 */
const KEPT_HEADERS = [
  'content-type',
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'svix-id',
  'svix-timestamp',
  'x-webhook-id',
  'x-webhook-event',
  'x-webhook-timestamp',
  'x-github-delivery',
  'x-github-event',
  'x-github-hook-id',
  'x-shopify-topic',
  'x-shopify-webhook-id',
  'x-shopify-event-id',
  'x-shopify-shop-domain',
  'x-shopify-triggered-at',
  'x-request-id',
];

// Which headers are secrets is the signing module's word (configuration asks it too).
export { isSecretHeader } from '../signing/common.js';

/**
 * Returns a function that picks the non-secret header subset of a request as a JSON string
 * (the form the store takes it in). `extra` adds the headers a source's locators read.
 */
export function createHeaderPicker(extra: readonly string[] = []): (headers: IncomingHeaders) => string {
  const names = new Set([...KEPT_HEADERS, ...extra.map((h) => h.toLowerCase())].filter((h) => !isSecretHeader(h)));
  return (headers) => {
    // A request carries fewer headers than the list names: walk the request's.
    const kept: Record<string, string> = {};
    for (const name in headers) {
      if (!names.has(name)) continue;
      const v = headers[name];
      if (v !== undefined) kept[name] = Array.isArray(v) ? v.join(', ') : v;
    }
    return JSON.stringify(kept);
  };
}

/** Header names a source's locators (and the scheme's defaults) read: they are kept too. */
export function locatorHeaders(locators: ReadonlyArray<readonly string[] | undefined>): string[] {
  const out: string[] = [];
  for (const list of locators) {
    for (const l of list ?? []) if (l.startsWith('header:')) out.push(l.slice('header:'.length));
  }
  return out;
}
