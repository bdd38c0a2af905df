import { randomBytes } from 'node:crypto';
import type { HmacSchemeOptions, SchemeName } from '../signing/index.js';
import { signedInvoiceRequest, type InvoiceEvent, type InvoiceStatus } from '../provider/invoice-events.js';
import type { Expectation } from './expectation.js';
import type { ProviderListOptions } from './provider-list.js';
import { isSuccess, postOnce, readEffects, type Answer, type Effect } from './http.js';

export interface ProveOptions {
  /** The receiver's webhook URL. */
  url: string;
  scheme: SchemeName;
  /** The receiver's active secret for this scheme. */
  secret: string;
  hmac?: HmacSchemeOptions;
  /** Further secrets the scheme signs with, e.g. PayTR's `salt` (its merchant_salt). */
  namedSecrets?: Record<string, string>;
  effectsUrl: string;
  /** Base of the control contract (`<control>/fail-next`, `<control>/slow-next`); staging only. */
  controlUrl?: string;
  /** A second URL of the same receiver (the callback URL case). */
  callbackUrl?: string;
  /** How long prove waits for an answer, as a provider would, before giving up (and retrying). */
  providerTimeoutMs: number;
  /** How long an effect may take to appear (a receiver that queues works after its 2xx). */
  effectTimeoutMs: number;
  /** Quiet time after the expected effect appeared, to catch a second one arriving late. */
  settleMs: number;
  /** Gaps between retries of a request that got no 2xx (a provider's ladder, compressed). */
  retryLadderMs: readonly number[];
  /** How many copies the `concurrent` check sends at once. */
  concurrentCopies: number;
  /** The provider's own list: `reconcile` also compares every resource it lists with the effects. */
  providerList?: ProviderListOptions;
}

export const defaultProveOptions = {
  providerTimeoutMs: 10_000,
  effectTimeoutMs: 30_000,
  settleMs: 2_000,
  retryLadderMs: [250, 500, 1_000, 2_000, 4_000, 8_000],
  concurrentCopies: 20,
} satisfies Partial<ProveOptions>;

// Its own file, so provider-list.ts can name it without importing this one (which imports it).
export type { Expectation } from './expectation.js';

export interface SendOptions {
  /** Secrets to sign with (several: one signature each, as during a rotation). */
  secrets?: readonly string[];
  /** Seconds since the epoch to sign with. */
  timestamp?: number;
  /** Changes the body after it was signed. */
  tamper?: (body: Buffer) => Buffer;
  url?: string;
  timeoutMs?: number;
}

/** A sequence of answers to one event until a 2xx (or the ladder ran out). */
export interface Delivery {
  answers: Answer[];
  ok: boolean;
}

const fresh = (prefix: string): string => `${prefix}${randomBytes(6).toString('hex')}`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once `ms` have passed since `since` (a `performance.now()` reading) by the monotonic clock.
 * A timer alone can fire a millisecond early by the clock that measures it (the event loop's time is
 * taken at the start of its turn), so this sleeps again for whatever is left.
 */
export async function sleepUntil(since: number, ms: number): Promise<void> {
  for (let left = ms - (performance.now() - since); left > 0; left = ms - (performance.now() - since)) await sleep(Math.ceil(left));
}

/**
 * What every check uses: fresh ids for this run (so prove can run again on the same receiver),
 * signed sending with the scheme's own signer, retries on a compressed ladder, reading the effects,
 * and the expectations the `reconcile` row compares at the end.
 */
export class ProveSession {
  readonly runId = randomBytes(3).toString('hex');
  readonly expectations = new Map<string, Expectation>();

  constructor(readonly options: ProveOptions) {}

  newInvoiceId(): string {
    // PayTR's merchant_oid is letters and digits only: the id the receiver sees must be the same one.
    return fresh(this.options.scheme === 'paytr' ? `inv${this.runId}` : `inv_${this.runId}`);
  }

  event(invoiceId: string, status: InvoiceStatus, occurredAt = new Date()): InvoiceEvent {
    return {
      eventId: fresh(`evt_${this.runId}`),
      invoiceId,
      status,
      amount: '49.90',
      paidAmount: status === 'paid' ? '49.90' : '0.00',
      currency: 'EUR',
      occurredAt,
    };
  }

  expect(invoiceId: string, expectation: Expectation): void {
    this.expectations.set(invoiceId, expectation);
  }

  /** One request, signed now (or as told), without retries. */
  send(e: InvoiceEvent, options: SendOptions = {}): Promise<Answer> {
    const o = this.options;
    const signed = signedInvoiceRequest(o.scheme, options.secrets ?? [o.secret], e, {
      ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
      ...(o.hmac ? { hmac: o.hmac } : {}),
      ...(o.namedSecrets ? { namedSecrets: o.namedSecrets } : {}),
    });
    const body = options.tamper ? options.tamper(signed.body) : signed.body;
    // PayTR counts a notification as received only when the answer is exactly `OK`.
    return postOnce(options.url ?? o.url, body, signed.headers, options.timeoutMs ?? o.providerTimeoutMs, o.scheme === 'paytr' ? 'OK' : undefined);
  }

  /** Sends until a 2xx, freshly signed each time, waiting the ladder's gaps between tries. */
  async deliver(e: InvoiceEvent, options: SendOptions = {}): Promise<Delivery> {
    const answers: Answer[] = [];
    for (let attempt = 0; ; attempt++) {
      const answer = await this.send(e, options);
      answers.push(answer);
      if (isSuccess(answer)) return { answers, ok: true };
      const gap = this.options.retryLadderMs[attempt];
      if (gap === undefined) return { answers, ok: false };
      await sleep(gap);
    }
  }

  /** The effects of these resources (all of them when none are named: the first, probing read). */
  effects(ids?: readonly string[]): Promise<Map<string, Effect>> {
    return readEffects(this.options.effectsUrl, this.options.providerTimeoutMs, ids);
  }

  async effectOf(invoiceId: string): Promise<Effect> {
    return (await this.effects([invoiceId])).get(invoiceId) ?? { count: 0 };
  }

  /**
   * Waits until the resource's effect satisfies `done` (or the effect timeout passes), then waits the
   * settle time and reads it again, so a second effect that arrives late is seen.
   */
  async settledEffect(invoiceId: string, done: (e: Effect) => boolean): Promise<Effect> {
    const deadline = Date.now() + this.options.effectTimeoutMs;
    while (!done(await this.effectOf(invoiceId)) && Date.now() < deadline) await sleep(100);
    await sleep(this.options.settleMs);
    return this.effectOf(invoiceId);
  }

  sleep(ms: number): Promise<void> {
    return sleep(ms);
  }

  /** Waits until `ms` have passed since `since` (a `performance.now()` reading): see `sleepUntil`. */
  sleepUntil(since: number, ms: number): Promise<void> {
    return sleepUntil(since, ms);
  }
}
