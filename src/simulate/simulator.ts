import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { parseConfig } from '../config/load.js';
import type { TekilConfig } from '../config/schema.js';
import { TekilError } from '../errors.js';
import { createLogger, type Logger } from '../logger.js';
import { createMetricsRegistry } from '../metrics.js';
import { createDispatcherService, outboxParts } from '../outbox/parts.js';
import { publish } from '../outbox/publish.js';
import { endpointSchemes, type EndpointScheme } from '../outbox/types.js';
import type { LadderSpec } from '../outbox/ladders.js';
import type { EventIdMode } from '../outbox/ids.js';
import { createScheme, hmacSchemeOptions, type HmacSchemeOptions } from '../signing/index.js';
import { craftgateHmacOptions } from '../signing/craftgate.js';
import { invoiceEventBody, invoiceEventType } from '../provider/invoice-events.js';
import type { Context, Service } from '../service.js';
import { resolveSettings } from '../settings.js';
import type { Db } from '../store/db.js';
import { openStore } from '../store/open.js';
import { migrate } from '../store/migrate.js';
import { insertInvoices } from '../store/sql/simulate/invoices.js';
import { startFaultProxy, type FaultProxy, type FaultRates } from './fault-proxy.js';
import { buildListApi } from './list-api.js';
import { paidAmountAt, planInvoices, seededRandom, type PlannedInvoice } from './lifecycle.js';
import { publishWaves, replayOldDeliveries, summarize, waitForSettled, type SimulationSummary } from './run.js';
import { EVERY_TENANT } from '../scope.js';

export interface SimulatorFaults extends FaultRates {
  /** Share of invoices whose events are sent latest first. */
  reorder: number;
  /** Share of delivered messages sent again by hand at the end, under the same event id. */
  replay: number;
  /** Rotate the endpoint's secret halfway: later requests carry two signatures. */
  rotate: boolean;
}

export const noFaults: SimulatorFaults = { drop: 0, delay: 0, duplicate: 0, reorder: 0, replay: 0, rotate: false };

export interface SimulatorOptions {
  /** Where the events go, e.g. http://127.0.0.1:8787/in/shop-paymos. */
  target: string;
  /** A second URL that receives every event with the same ids (an invoice's callback URL). */
  callbackUrl?: string | undefined;
  /**
   * The event ids the receiver sees: `delivery` (each endpoint its own, as Paymos sends: the default for
   * `paymos` without a callback URL) or `message` (one id for every URL: the default otherwise, and the
   * callback URL case, where the provider sends the same id to both).
   */
  eventId?: EventIdMode | undefined;
  scheme: SimulatedScheme;
  /** For scheme `hmac`: how it signs (header, algorithm, encoding, …). */
  hmac?: HmacSchemeOptions | undefined;
  /** The signing secret (`whsec_…`; PayTR's merchant key, iyzico's secret key); one is generated when absent. */
  secret?: string | undefined;
  /** For scheme `paytr`: the merchant salt; one is generated when absent. */
  salt?: string | undefined;
  invoices: number;
  /** Multiplies the ladder's gaps (`sending.time_scale`): 0.001 makes minutes into tens of ms. */
  timeScale: number;
  ladder?: LadderSpec | undefined;
  /** How long the simulated provider waits for an answer before it counts the attempt as failed. */
  timeoutMs: number;
  faults: SimulatorFaults;
  /** Pause between lifecycle steps, in provider time before the time scale (default 1m). */
  stepGapMs?: number | undefined;
  seed?: number | undefined;
  /** The simulator's own store: an open one, or DATABASE_URL / an embedded data dir. */
  db?: Db | undefined;
  databaseUrl?: string | undefined;
  dataDir?: string | undefined;
  /** The list API; port 0 picks one. */
  listen?: { host: string; port: number } | undefined;
  apiKey?: string | undefined;
  /** List API requests per second before 429; 0 for none. */
  rateLimit?: number | undefined;
  logger?: Logger | undefined;
  /** Called once the invoices exist and before any event is sent (a merchant creating its orders). */
  onInvoicesCreated?: ((invoices: readonly PlannedInvoice[]) => Promise<void>) | undefined;
  onProgress?: ((line: string) => void) | undefined;
  /** Told how many deliveries are still unsettled, at each check while the run waits for the tail. */
  onSettling?: ((unsettled: number) => void) | undefined;
  /** Requests in flight at once, per URL (default 32). */
  concurrency?: number | undefined;
  /** Longest wait for every delivery to settle (default 10 minutes). */
  settleTimeoutMs?: number | undefined;
}

/** The outbox's schemes, and the providers whose requests the simulator signs itself. */
export const simulatedSchemes = [...endpointSchemes, 'paytr', 'iyzico', 'craftgate', 'sipay'] as const;
export type SimulatedScheme = (typeof simulatedSchemes)[number];

/**
 * Paymos gives every endpoint its own event id ("iki uç nokta … iki farklı kimlik görür"), so its
 * simulation does too; a callback URL is the other providers' case, one id sent to two URLs.
 */
export function simulatedEventIdMode(options: Pick<SimulatorOptions, 'scheme' | 'callbackUrl' | 'eventId'>): EventIdMode {
  return options.eventId ?? (options.scheme === 'paymos' && !options.callbackUrl ? 'delivery' : 'message');
}

/**
 * iyzico's direct-format signature (X-IYZ-SIGNATURE-V3) as the outbox's generic scheme makes it:
 * the endpoint's secret is the iyzico secret key.
 */
const IYZICO_DIRECT_HMAC: HmacSchemeOptions = hmacSchemeOptions.parse({
  signature_header: 'X-IYZ-SIGNATURE-V3',
  encoding: 'hex',
  signed_payload: '{secret:key}{body:iyziEventType}{body:paymentId}{body:paymentConversationId}{body:status}',
});

export interface Simulator {
  runId: string;
  /** The list API's base URL (`…/v1/invoices`), when it listens. */
  listUrl: string | undefined;
  apiKey: string;
  secret: string;
  /** PayTR's merchant salt (scheme `paytr` only). */
  salt: string | undefined;
  db: Db;
  /** Creates the invoices, walks them to their ends under the faults, replays, waits, and reports. */
  run(): Promise<SimulationSummary>;
  close(): Promise<void>;
}

function simulatorConfig(options: SimulatorOptions): TekilConfig {
  return parseConfig(
    {
      sending: {
        // The dispatcher only ever posts to the simulator's own fault proxies on loopback.
        allow_networks: ['127.0.0.0/8'],
        time_scale: options.timeScale,
        dispatcher: { poll_interval: '100ms', concurrency: 2 * (options.concurrency ?? 32) },
      },
      ...(options.dataDir ? { store: { data_dir: options.dataDir } } : {}),
    },
    {},
  );
}

export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  for (const [name, rate] of Object.entries(options.faults)) {
    if (typeof rate === 'number' && !(rate >= 0 && rate <= 1)) throw new TekilError('VALIDATION_FAILED', `fault ${name}: a rate from 0 to 1`);
  }
  if (options.faults.drop + options.faults.delay + options.faults.duplicate > 1) {
    throw new TekilError('VALIDATION_FAILED', 'drop + delay + duplicate rates add up to more than 1', { hint: 'each request meets at most one of them' });
  }
  if (!Number.isInteger(options.invoices) || options.invoices < 1) throw new TekilError('VALIDATION_FAILED', 'invoices: a whole number of at least 1');
  if (['paytr', 'iyzico', 'craftgate', 'sipay'].includes(options.scheme) && options.faults.rotate) {
    throw new TekilError('VALIDATION_FAILED', `rotate: ${options.scheme} has one key per merchant and no rotation window`);
  }
  const config = simulatorConfig(options);
  const env: NodeJS.ProcessEnv = {
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    ...(options.dataDir ? { TEKIL_DATA_DIR: options.dataDir } : {}),
  };
  const settings = resolveSettings(config, env);
  const logger = options.logger ?? createLogger({ level: 'warn' });
  const ownsDb = !options.db;
  const db = options.db ?? (await openStore({ databaseUrl: settings.databaseUrl, dataDir: settings.dataDir, poolSize: 8 }));
  const closers: (() => Promise<void>)[] = [];
  try {
    await migrate(db);
    const ctx: Context = { config, settings, db, logger, metrics: createMetricsRegistry(false) };
    const { endpoints } = outboxParts(ctx);
    const random = seededRandom(options.seed ?? Date.now());
    const runId = randomBytes(4).toString('hex');
    const delayMs = options.timeoutMs + Math.max(200, options.timeoutMs / 2);
    const rates: FaultRates = { drop: options.faults.drop, delay: options.faults.delay, duplicate: options.faults.duplicate };
    const proxy = await startFaultProxy({ target: options.target, rates, delayMs, random });
    closers.push(() => proxy.close());
    let callbackProxy: FaultProxy | undefined;
    if (options.callbackUrl) {
      callbackProxy = await startFaultProxy({ target: options.callbackUrl, rates, delayMs, random });
      closers.push(() => callbackProxy!.close());
    }
    // The store is the simulator's own: endpoints of earlier runs would receive this run's events too.
    for (const old of await endpoints.list(db, EVERY_TENANT)) await endpoints.remove(db, old.id);
    // PayTR and Sipay sign in the body: the simulator writes the hash (the hash_key token) into each
    // body as it publishes it, and the outbox's own Standard Webhooks headers ride along unread.
    // iyzico's and Craftgate's headers are the outbox's hmac scheme.
    const inBody = options.scheme === 'paytr' || options.scheme === 'sipay';
    const endpointScheme: EndpointScheme =
      options.scheme === 'paytr' || options.scheme === 'sipay'
        ? 'standard'
        : options.scheme === 'iyzico' || options.scheme === 'craftgate'
          ? 'hmac'
          : options.scheme;
    const endpointHmac = options.scheme === 'iyzico' ? IYZICO_DIRECT_HMAC : options.scheme === 'craftgate' ? craftgateHmacOptions : options.hmac;
    const bodyKey = inBody ? (options.secret ?? `${options.scheme}_key_${randomBytes(12).toString('hex')}`) : undefined;
    const salt = options.scheme === 'paytr' ? (options.salt ?? `paytr_salt_${randomBytes(12).toString('hex')}`) : undefined;
    const bodySigner = inBody ? createScheme(options.scheme as 'paytr' | 'sipay') : undefined;
    const eventBody = (e: Parameters<typeof invoiceEventBody>[1]): Buffer => {
      const body = invoiceEventBody(options.scheme, e);
      return bodySigner && bodyKey ? bodySigner.signBody!({ body, secrets: [bodyKey], ...(salt ? { namedSecrets: { salt } } : {}) }) : body;
    };
    const eventIdMode = simulatedEventIdMode(options);
    const { endpoint, secret: endpointSecret } = await endpoints.create(db, {
      url: proxy.url,
      event_id: eventIdMode,
      description: `tekil simulate ${runId} → ${options.target}`,
      scheme: endpointScheme,
      ...(endpointHmac ? { hmac: endpointHmac } : {}),
      timeout: `${options.timeoutMs}ms`,
      ladder: options.ladder ?? 'paymos',
      max_in_flight: options.concurrency ?? 32,
      ...(options.secret && !bodyKey ? { secret: options.secret } : {}),
    });
    const secret = bodyKey ?? endpointSecret;
    const dispatcher: Service = createDispatcherService(ctx);
    await dispatcher.start();
    closers.push(() => dispatcher.stop());

    const apiKey = options.apiKey ?? `sk_sim_${randomBytes(12).toString('hex')}`;
    let listApp: FastifyInstance | undefined;
    let listUrl: string | undefined;
    if (options.listen) {
      listApp = buildListApi({ db, apiKey, rateLimit: options.rateLimit ?? 0 });
      const address = await listApp.listen({ host: options.listen.host, port: options.listen.port });
      listUrl = `${address}/v1/invoices`;
      closers.push(() => listApp!.close());
    }
    const progress = options.onProgress ?? (() => {});

    return {
      runId,
      listUrl,
      apiKey,
      secret,
      salt,
      db,
      async run() {
        const started = Date.now();
        const invoices = planInvoices({ count: options.invoices, runId, random, reorderRate: options.faults.reorder });
        const createdAt = new Date(started - 1000);
        await insertInvoices.run(db, {
          ids: invoices.map((i) => i.id),
          orderIds: invoices.map((i) => i.orderId),
          statuses: invoices.map(() => 'awaiting_payment'),
          amounts: invoices.map((i) => i.amount),
          paidAmounts: invoices.map(() => '0.00'),
          currencies: invoices.map((i) => i.currency),
          updatedAt: invoices.map(() => createdAt),
        });
        await options.onInvoicesCreated?.(invoices);
        progress(`created ${invoices.length} invoices (run ${runId})`);
        const extras = options.callbackUrl && callbackProxy ? [{ url: callbackProxy.url, endpointId: endpoint.id }] : [];
        const stepGapMs = (options.stepGapMs ?? 60_000) * options.timeScale;
        let rotatedSecret: string | undefined;
        const published = await publishWaves({
          db,
          invoices,
          stepGapMs,
          startedAt: new Date(started),
          // The scheme's natural envelope (Paymos `{event_id, event_type, …, data: {invoice_id, …}}`, a
          // Stripe event, PayTR's signed form, …) as exact bytes, carrying the event id the outbox assigns and retries with.
          publishOne: (tx, invoice, status, occurredAt) =>
            publish(tx, {
              type: invoiceEventType(status),
              resourceId: invoice.id,
              occurredAt,
              body: (eventId) =>
                eventBody({
                  eventId,
                  invoiceId: invoice.id,
                  status,
                  amount: invoice.amount,
                  paidAmount: paidAmountAt(status, invoice.amount),
                  currency: invoice.currency,
                  occurredAt,
                  orderId: invoice.orderId,
                }),
              extraDestinations: extras,
            }),
          halfway: async () => {
            if (!options.faults.rotate) return;
            rotatedSecret = (await endpoints.rotateSecret(db, endpoint.id)).secret;
            progress(`rotated the signing secret: requests now carry two signatures (new secret ${rotatedSecret})`);
          },
          progress,
        });
        const settleMs = options.settleTimeoutMs ?? 600_000;
        // Replays are drawn from what has already been delivered, while the rest is still settling:
        // an operator replays old deliveries while new ones flow, and the run waits for one tail only.
        const replayed = await replayOldDeliveries(db, options.faults.replay, random, settleMs);
        if (replayed > 0) progress(`replayed ${replayed} delivered messages by hand (same event ids)`);
        await waitForSettled(db, settleMs, options.onSettling);
        progress('every delivery settled');
        return summarize(db, {
          runId,
          eventIds: eventIdMode,
          invoices,
          published,
          replayed,
          rotatedSecret,
          proxies: { target: proxy.counts, ...(callbackProxy ? { callback: callbackProxy.counts } : {}) },
          durationMs: Date.now() - started,
        });
      },
      async close() {
        for (const close of closers.reverse()) await close();
        if (ownsDb) await db.close();
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    if (ownsDb) await db.close();
    throw err;
  }
}
