import { z } from 'zod';
import { TekilError } from '../errors.js';
import { providerRequest } from '../reconcile/provider-http.js';
import type { Expectation } from './expectation.js';

/**
 * A provider's own list of what it announced (the list API `tekil simulate` serves, `GET /v1/invoices`
 * with a cursor): the `reconcile` row then also holds the receiver to every listed resource, not only
 * to the ones prove sent itself — the last step of the pre-release checklist, "compare with the
 * provider's list".
 */
export interface ProviderListOptions {
  url: string;
  /** Sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /**
   * The item field that names the resource in the receiver's effects: `id` (the invoice), or e.g.
   * `order_id` for a shop whose effects count its orders.
   */
  resourceField: string;
}

const PAGE_SIZE = 500;

const listPage = z.object({
  items: z.array(z.record(z.string(), z.unknown())),
  next_cursor: z.string().nullable(),
});

/** Every listed resource, expected to show its effect once, in the state the provider lists. */
export async function providerListExpectations(list: ProviderListOptions, timeoutMs: number): Promise<Map<string, Expectation>> {
  const expectations = new Map<string, Expectation>();
  let cursor: string | null = null;
  do {
    const url = new URL(list.url);
    url.searchParams.set('limit', String(PAGE_SIZE));
    if (cursor !== null) url.searchParams.set('cursor', cursor);
    const res = await providerRequest('GET', url.toString(), { authorization: `Bearer ${list.apiKey}` }, { maxRetries: 5, maxWaitMs: 10_000, timeoutMs });
    const page = listPage.safeParse(res.json);
    if (!page.success) {
      throw new TekilError('RECONCILE_PROVIDER_FAILED', `${list.url} does not answer {items: [...], next_cursor}`, {
        hint: 'the provider list must be cursor-paginated like GET /v1/invoices (docs/simulate.md)',
      });
    }
    for (const item of page.data.items) {
      const resource = item[list.resourceField];
      const state = item.status;
      if (typeof resource !== 'string' || typeof state !== 'string') {
        throw new TekilError('RECONCILE_PROVIDER_FAILED', `an item of ${list.url} has no text "${list.resourceField}" or "status"`, {
          hint: 'choose the item field that names the resource with --provider-resource',
        });
      }
      expectations.set(resource, { count: 1, state, check: 'provider list' });
    }
    cursor = page.data.next_cursor;
  } while (cursor !== null);
  return expectations;
}
