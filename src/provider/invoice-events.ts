import { createScheme, type HmacSchemeOptions, type SchemeName } from '../signing/index.js';

/**
 * A payment provider's invoice, as the source material's providers (Paymos, MercanPay) describe it:
 * it moves `awaiting_payment → confirming → paid`, or to `underpaid_waiting` / `underpaid`,
 * `paid_over` or `expired`, and each move is announced by a webhook. `tekil prove` and
 * `tekil simulate` build their requests here, so both speak each scheme's natural envelope.
 */
export const invoiceStatuses = ['awaiting_payment', 'confirming', 'paid', 'underpaid_waiting', 'underpaid', 'paid_over', 'expired'] as const;
export type InvoiceStatus = (typeof invoiceStatuses)[number];

/** The event type a status change is announced with (`invoice.paid`, …). */
export function invoiceEventType(status: InvoiceStatus): string {
  return `invoice.${status}`;
}

export interface InvoiceEvent {
  /** The delivery id: the same for every copy and retry of this event. */
  eventId: string;
  invoiceId: string;
  status: InvoiceStatus;
  /** Decimal text in the currency's unit, e.g. `"49.90"` (providers send amounts as strings). */
  amount: string;
  paidAmount: string;
  currency: string;
  /** The provider's time of the change. */
  occurredAt: Date;
  /** The merchant's order the invoice pays, when the merchant gave one. */
  orderId?: string;
}

/** The body a provider of this scheme would send for the event, as exact bytes. */
export function invoiceEventBody(scheme: SchemeName, e: InvoiceEvent): Buffer {
  const type = invoiceEventType(e.status);
  const invoice = { status: e.status, amount: e.amount, paid_amount: e.paidAmount, currency: e.currency, ...(e.orderId ? { order_id: e.orderId } : {}) };
  let body: unknown;
  switch (scheme) {
    case 'paymos':
      body = { event_id: e.eventId, event_type: type, version: '2024-06-01', occurred_at: e.occurredAt.toISOString(), data: { invoice_id: e.invoiceId, ...invoice } };
      break;
    case 'stripe':
      body = {
        id: e.eventId,
        object: 'event',
        type,
        created: Math.floor(e.occurredAt.getTime() / 1000),
        livemode: false,
        data: { object: { id: e.invoiceId, object: 'invoice', ...invoice } },
      };
      break;
    case 'standard':
      body = { type, timestamp: e.occurredAt.toISOString(), data: { id: e.invoiceId, ...invoice } };
      break;
    case 'shopify':
      body = { id: e.invoiceId, ...invoice, updated_at: e.occurredAt.toISOString() };
      break;
    case 'github':
    case 'hmac':
      body = { id: e.eventId, type, occurred_at: e.occurredAt.toISOString(), data: { id: e.invoiceId, ...invoice } };
      break;
  }
  return Buffer.from(JSON.stringify(body));
}

export interface SignedRequest {
  body: Buffer;
  headers: Record<string, string>;
}

/**
 * The whole request for one event: body, content type, the scheme's ids and signature headers (one
 * signature per secret, as during a rotation). Schemes that carry the event id or type in headers
 * (Standard Webhooks, GitHub, Shopify) get them there.
 */
export function signedInvoiceRequest(
  scheme: SchemeName,
  secrets: readonly string[],
  e: InvoiceEvent,
  options: { timestamp?: number; hmac?: HmacSchemeOptions } = {},
): SignedRequest {
  const body = invoiceEventBody(scheme, e);
  const signer = createScheme(scheme, options.hmac);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...signer.sign({ body, secrets, id: e.eventId, ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }) }),
  };
  if (scheme === 'github') {
    headers['x-github-event'] = invoiceEventType(e.status);
  } else if (scheme === 'shopify') {
    headers['x-shopify-topic'] = invoiceEventType(e.status);
    headers['x-shopify-triggered-at'] = e.occurredAt.toISOString();
  }
  return { body, headers };
}
