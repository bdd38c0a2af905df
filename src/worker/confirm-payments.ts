import type { ConfirmConfig } from '../config/confirm.js';
import type { SourceConfig } from '../config/source.js';
import { TekilError } from '../errors.js';
import { comparePayment, lookupPayment, paymentLookupOf, providerTitle } from '../lookup/index.js';
import { RequestFields } from '../signing/request-fields.js';
import type { BatchDeps } from './batch-deps.js';
import type { InboxClaimedDelivery } from './claim-due-deliveries.js';

/**
 * What reading a delivery's payment back from its provider said, before the effect:
 * - `confirmed`: amount, currency and status agree; the handler or forward runs;
 * - `mismatch`: they differ (or the notification lacks what the source expects): the review queue, no effect;
 * - `failed`: the provider could not be read: retried on the source's ladder like a failed handler;
 * - `unstarted`: the batch reached its deadline first: back to the queue unstarted.
 */
export type ConfirmVerdict =
  | { kind: 'confirmed'; summary: string }
  | { kind: 'mismatch'; error: TekilError }
  | { kind: 'failed'; error: TekilError }
  | { kind: 'unstarted' };

/** Lookups of one batch at once: a provider is not asked more than this many times in parallel by one batch. */
const LOOKUPS_AT_ONCE = 8;

/**
 * Reads the payment of each claimed delivery whose source has `confirm:` from the provider, and
 * compares it with the notification. It runs after the claim committed (the lease holds the
 * deliveries) and before the batch transaction opens: no transaction stays open while a provider is
 * waited on. Keyed by the claimed row's `row_ref`.
 */
export async function confirmPayments(deps: BatchDeps, rows: readonly InboxClaimedDelivery[], deadline: number): Promise<Map<string, ConfirmVerdict>> {
  const verdicts = new Map<string, ConfirmVerdict>();
  const todo = rows.filter((r) => deps.config.sources[r.source]?.confirm !== undefined);
  let next = 0;
  const lane = async () => {
    while (next < todo.length) {
      const row = todo[next++]!;
      if (Date.now() > deadline) {
        deps.metrics.confirms.inc({ source: row.source, outcome: 'unstarted' });
        verdicts.set(row.row_ref, { kind: 'unstarted' });
        continue;
      }
      const source = deps.config.sources[row.source]!;
      const verdict = await confirmOne(source, source.confirm!, row);
      deps.metrics.confirms.inc({ source: row.source, outcome: verdict.kind === 'failed' ? 'lookup_failed' : verdict.kind });
      if (verdict.kind !== 'confirmed') {
        deps.logger.info(
          { source: row.source, eventId: row.event_id, verdict: verdict.kind, error: 'error' in verdict ? verdict.error.message : undefined },
          'confirm: the payment was not confirmed',
        );
      }
      verdicts.set(row.row_ref, verdict);
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUPS_AT_ONCE, todo.length) }, lane));
  return verdicts;
}

async function confirmOne(source: SourceConfig, confirm: ConfirmConfig, row: InboxClaimedDelivery): Promise<ConfirmVerdict> {
  const b = row.body;
  const body = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const fields = new RequestFields(body, row.headers);
  const provider = providerTitle[confirm.fetch.provider];
  let id: string | undefined;
  for (const locator of confirm.id) {
    id = fields.read(locator);
    if (id !== undefined && id !== '') break;
  }
  if (id === undefined || id === '') {
    return {
      kind: 'mismatch',
      error: new TekilError('PAYMENT_ID_MISSING', `the notification carries no payment id at ${confirm.id.join(' or ')} to ask ${provider} with`),
    };
  }
  try {
    const payment = await lookupPayment(paymentLookupOf(source, confirm.fetch), id, confirm.timeout);
    const compared = comparePayment(confirm.expect, fields, payment, provider);
    return compared.ok ? { kind: 'confirmed', summary: compared.summary } : { kind: 'mismatch', error: compared.error };
  } catch (err) {
    if (err instanceof TekilError && err.code === 'PAYMENT_LOOKUP_FAILED') return { kind: 'failed', error: err };
    return { kind: 'failed', error: new TekilError('PAYMENT_LOOKUP_FAILED', `${provider}: ${(err as Error).message}`, { cause: err }) };
  }
}
