import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The payment lookups of PayTR, iyzico and Papara as small servers on real sockets, each shaped from
 * the provider's own documentation and checking the request the way the provider does (PayTR's
 * paytr_token, iyzico's IYZWSv2 signature, Papara's ApiKey). `down` makes one answer 503, as an
 * outage would; `requests` counts what each was asked.
 */
export interface PaymentApi {
  url: string;
  requests: Array<{ method: string; path: string; body: string; headers: IncomingMessage['headers'] }>;
  down: boolean;
  /** While set, answers wait for it: a test looks at the store while tekil waits on the provider. */
  hold: Promise<void> | undefined;
  /** Called as each request arrives (before a held answer). */
  onRequest: (() => void) | undefined;
  close(): Promise<void>;
}

type Answer = { status: number; body: unknown };

async function serve(route: (req: IncomingMessage, url: URL, body: string) => Answer): Promise<PaymentApi> {
  const api: PaymentApi = { url: '', requests: [], down: false, hold: undefined, onRequest: undefined, close: async () => {} };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://fake');
      api.requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, body, headers: req.headers });
      api.onRequest?.();
      if (api.hold) await api.hold;
      const answer = api.down ? { status: 503, body: { message: 'Service Unavailable' } } : route(req, url, body);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** A payment PayTR's status query reports: its amounts as PayTR writes them (`49,9`), its currency (`TL`). */
export interface PaytrOrder {
  payment_amount: string;
  payment_total: string;
  currency: string;
}

/**
 * PayTR's Durum Sorgu (dev.paytr.com/durum-sorgu): POST /odeme/durum-sorgu, a form of merchant_id,
 * merchant_oid, paytr_token = base64(HMAC-SHA256(merchant_key, merchant_id + merchant_oid + merchant_salt)).
 * A successful payment: `status: success` and its fields; none: `status: error`, err_no 004.
 */
export async function startFakePaytr(options: { merchantId: string; key: string; salt: string; orders: Map<string, PaytrOrder> }): Promise<PaymentApi> {
  return serve((req, url, body) => {
    if (req.method !== 'POST' || url.pathname !== '/odeme/durum-sorgu') return { status: 404, body: {} };
    const form = new URLSearchParams(body);
    const oid = form.get('merchant_oid') ?? '';
    const token = createHmac('sha256', options.key)
      .update((form.get('merchant_id') ?? '') + oid + options.salt)
      .digest('base64');
    if (form.get('merchant_id') !== options.merchantId || !sameText(form.get('paytr_token') ?? '', token)) {
      return { status: 200, body: { status: 'error', err_no: '003', err_msg: 'paytr_token gecersiz' } };
    }
    const order = options.orders.get(oid);
    if (!order) return { status: 200, body: { status: 'error', err_no: '004', err_msg: 'merchant_oid ile basarili odeme bulunamadi' } };
    return {
      status: 200,
      body: {
        status: 'success',
        net_tutar: '48.65',
        kesinti_tutari: '1.25',
        ...order,
        payment_date: '2026-12-07 18:00:00',
        taksit: '0',
        kart_marka: 'BONUS',
        masked_pan: '455359AAA6747',
        odeme_tipi: 'KART',
        test_mode: '1',
        returns: [],
      },
    };
  });
}

/** A payment iyzico's retrieve reports. */
export interface IyzicoPayment {
  paymentId: string;
  conversationId: string;
  paidPrice: number;
  currency: string;
  paymentStatus: string;
}

/**
 * iyzico's payment retrieve: POST /payment/detail with `Authorization: IYZWSv2 base64(apiKey:…&randomKey:…&signature:…)`,
 * signature = hex(HMAC-SHA256(secret key, random key + "/payment/detail" + body)), as its libraries sign.
 */
export async function startFakeIyzico(options: { apiKey: string; secretKey: string; payments: IyzicoPayment[] }): Promise<PaymentApi> {
  return serve((req, url, body) => {
    if (req.method !== 'POST' || url.pathname !== '/payment/detail') return { status: 404, body: {} };
    const auth = req.headers.authorization ?? '';
    const params = new Map(
      Buffer.from(auth.replace(/^IYZWSv2 /, ''), 'base64')
        .toString('utf8')
        .split('&')
        .map((kv) => [kv.slice(0, kv.indexOf(':')), kv.slice(kv.indexOf(':') + 1)] as const),
    );
    const expected = createHmac('sha256', options.secretKey)
      .update((params.get('randomKey') ?? '') + url.pathname + body)
      .digest('hex');
    if (!auth.startsWith('IYZWSv2 ') || params.get('apiKey') !== options.apiKey || !sameText(params.get('signature') ?? '', expected)) {
      return { status: 200, body: { status: 'failure', errorCode: '1000', errorMessage: 'Geçersiz imza', locale: 'tr', systemTime: Date.now() } };
    }
    const request = JSON.parse(body) as { paymentId?: string; paymentConversationId?: string; conversationId?: string };
    const payment = options.payments.find(
      (p) => p.paymentId === request.paymentId || (!request.paymentId && p.conversationId === request.paymentConversationId),
    );
    if (!payment)
      return { status: 200, body: { status: 'failure', errorCode: '5083', errorMessage: 'Ödeme bulunamadı', locale: 'tr', systemTime: Date.now() } };
    return {
      status: 200,
      body: {
        status: 'success',
        locale: 'tr',
        systemTime: Date.now(),
        conversationId: request.conversationId,
        price: payment.paidPrice,
        paidPrice: payment.paidPrice,
        installment: 1,
        paymentId: payment.paymentId,
        currency: payment.currency,
        basketId: 'B67832',
        paymentStatus: payment.paymentStatus,
        fraudStatus: 1,
      },
    };
  });
}

/** A payment Papara's API reports (status 0 awaiting, 1 completed, 2 refunded; currency 0 = TRY). */
export interface PaparaPayment {
  id: string;
  referenceId: string;
  amount: number;
  currency: number;
  status: number;
}

/** Papara's payment get: GET /payments?id=<id>, header ApiKey; `{ data, succeeded, error }`. */
export async function startFakePapara(options: { apiKey: string; payments: PaparaPayment[] }): Promise<PaymentApi> {
  return serve((req, url) => {
    if (req.method !== 'GET' || url.pathname !== '/payments') return { status: 404, body: {} };
    if (req.headers.apikey !== options.apiKey) return { status: 401, body: { succeeded: false, error: { message: 'Unauthorized', code: 401 } } };
    const payment = options.payments.find((p) => p.id === url.searchParams.get('id'));
    if (!payment) return { status: 200, body: { succeeded: false, error: { message: 'Payment not found', code: 997 } } };
    return {
      status: 200,
      body: { succeeded: true, data: { ...payment, fee: 0, createdAt: '2026-12-07T18:00:00', orderDescription: 'Order', notificationDone: true } },
    };
  });
}
