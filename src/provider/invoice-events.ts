import { createScheme, type HmacSchemeOptions, type SchemeName } from '../signing/index.js';
import { parseSecretKey, SECRET_KEY_PREFIX } from '../signing/ed25519.js';

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
      body = {
        event_id: e.eventId,
        event_type: type,
        version: '2024-06-01',
        occurred_at: e.occurredAt.toISOString(),
        data: { invoice_id: e.invoiceId, ...invoice },
      };
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
    case 'paytr':
      return paytrNotificationForm(e);
    case 'iyzico':
      body = {
        iyziEventTime: e.occurredAt.getTime(),
        iyziEventType: 'API_AUTH',
        iyziReferenceCode: e.eventId,
        paymentId: e.invoiceId,
        paymentConversationId: e.orderId ?? e.invoiceId,
        status: IYZICO_STATUS[e.status],
        merchantId: '100000',
      };
      break;
    case 'papara':
      // Papara notifies the payment object itself; its signBody adds merchantSecretKey.
      body = {
        id: e.invoiceId,
        createdAt: e.occurredAt.toISOString(),
        referenceId: e.orderId ?? e.invoiceId,
        orderDescription: e.eventId,
        status: PAPARA_STATUS[e.status],
        amount: Number(e.paidAmount),
        fee: 0,
        currency: 0,
        notificationDone: false,
      };
      break;
    case 'craftgate':
      body = {
        eventType: 'API_AUTH',
        eventTime: e.occurredAt.toISOString().slice(0, -1),
        eventTimestamp: Math.floor(e.occurredAt.getTime() / 1000),
        status: e.status === 'paid' || e.status === 'paid_over' ? 'SUCCESS' : 'FAILURE',
        payloadId: e.invoiceId,
      };
      break;
    case 'sipay':
      // The scheme's signBody adds the hash_key token made of these fields.
      body = {
        invoice_id: e.invoiceId,
        order_id: e.orderId ?? e.eventId,
        status: e.status === 'paid' || e.status === 'paid_over' ? 'Completed' : 'Failed',
        total: e.paidAmount,
        currency_code: e.currency,
      };
      break;
  }
  return Buffer.from(JSON.stringify(body));
}

/** The invoice's states in iyzico's payment status words (documented: SUCCESS, FAILURE, INIT_THREEDS, CALLBACK_THREEDS, …). */
const IYZICO_STATUS: Record<InvoiceStatus, string> = {
  awaiting_payment: 'INIT_THREEDS',
  confirming: 'INIT_THREEDS',
  underpaid_waiting: 'CALLBACK_THREEDS',
  paid: 'SUCCESS',
  paid_over: 'SUCCESS',
  underpaid: 'FAILURE',
  expired: 'FAILURE',
};

/** The invoice's states in Papara's payment status numbers (0 awaiting, 1 completed, 2 refunded). */
const PAPARA_STATUS: Record<InvoiceStatus, number> = {
  awaiting_payment: 0,
  confirming: 0,
  underpaid_waiting: 0,
  paid: 1,
  paid_over: 1,
  underpaid: 0,
  expired: 0,
};

/**
 * PayTR's notification form without its `hash` (the scheme's signBody adds it): PayTR knows two
 * outcomes, `success` and `failed`, and sends the amount in kuruş (34.56 → 3456), 0 on failure.
 */
function paytrNotificationForm(e: InvoiceEvent): Buffer {
  const success = e.status === 'paid' || e.status === 'paid_over';
  const form = new URLSearchParams({
    merchant_oid: e.invoiceId.replace(/[^A-Za-z0-9]/g, ''),
    status: success ? 'success' : 'failed',
    total_amount: success ? String(Math.round(Number(e.paidAmount) * 100)) : '0',
    payment_type: 'card',
    currency: e.currency === 'TRY' ? 'TL' : e.currency,
    payment_amount: String(Math.round(Number(e.amount) * 100)),
    test_mode: '1',
    ...(success ? {} : { failed_reason_code: '2', failed_reason_msg: 'Ödeme onaylanmadı' }),
  });
  return Buffer.from(form.toString());
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
  options: { timestamp?: number; hmac?: HmacSchemeOptions; namedSecrets?: Record<string, string> } = {},
): SignedRequest {
  const unsigned = invoiceEventBody(scheme, e);
  const signer = createScheme(scheme, options.hmac);
  // A Standard Webhooks secret key (`whsk_…`) signs v1a (Ed25519) where a `whsec_…` signs v1.
  const signingKeys = scheme === 'standard' ? secrets.filter((s) => s.startsWith(SECRET_KEY_PREFIX)).map((s) => parseSecretKey(s)) : [];
  const input = {
    body: unsigned,
    secrets: signingKeys.length > 0 ? secrets.filter((s) => !s.startsWith(SECRET_KEY_PREFIX)) : secrets,
    ...(signingKeys.length > 0 ? { signingKeys } : {}),
    id: e.eventId,
    ...(options.namedSecrets ? { namedSecrets: options.namedSecrets } : {}),
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
  };
  // A signature carried in the body (PayTR's hash field) is written into it.
  const body = signer.signBody ? signer.signBody(input) : unsigned;
  const headers: Record<string, string> = {
    'content-type': scheme === 'paytr' ? 'application/x-www-form-urlencoded' : 'application/json',
    ...signer.sign(input),
  };
  if (scheme === 'github') {
    headers['x-github-event'] = invoiceEventType(e.status);
  } else if (scheme === 'shopify') {
    headers['x-shopify-topic'] = invoiceEventType(e.status);
    headers['x-shopify-triggered-at'] = e.occurredAt.toISOString();
  }
  return { body, headers };
}
