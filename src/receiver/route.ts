import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { TekilError, isTekilError, toClientError } from '../errors.js';
import type { Context } from '../service.js';
import type { InboxWriter } from './batcher.js';
import type { PreviousOutcome } from '../store/sql/inbox/insert-deliveries.js';
import { receiverMetrics } from './metrics.js';
import { compileSources, publicKeysFor } from './sources.js';
import { withinDeadline } from './deadline.js';
import type { IncomingHeaders } from '../signing/types.js';
import { BodiesInFlight, type BodyBudgetOptions } from './body.js';
import { addressKey } from '../http/connection-cap.js';
import type { TekilConfig } from '../config/index.js';
import { failSpan, startChild, traceparentOf, tracing, type Tracing } from '../telemetry/tracing.js';
import type { Span } from '@opentelemetry/api';

export interface ReceiverRoutesOptions {
  ctx: Context;
  batcher: InboxWriter;
}

const ACCEPTED = '{"status":"accepted"}';
const DUPLICATE = '{"status":"duplicate"}';
const EMPTY = Buffer.alloc(0);

/** `{"status":"duplicate","previous":{"status":"done","result_ref":"ord_42"}}`. */
function duplicateAnswer(previous: PreviousOutcome): string {
  return JSON.stringify({ status: 'duplicate', previous: { status: previous.status, result_ref: previous.result_ref } });
}
/** The type the receiver's one body parser is reached with; see the onRequest hook. */
const NEUTRAL_CONTENT_TYPE = 'application/octet-stream';
/** The Content-Type each request arrived with, while its header holds the neutral one. */
const sentContentType = new WeakMap<FastifyRequest, string>();
/**
 * The request's headers with every line of a repeated header kept apart (Node's headersDistinct).
 * Requests made by `inject()` have no headersDistinct; they get the joined headers.
 */
function headerLines(req: FastifyRequest): IncomingHeaders {
  return (req.raw as { headersDistinct?: IncomingHeaders }).headersDistinct ?? req.headers;
}

/** The metrics label for requests to a source that does not exist (keeps label cardinality bounded). */
const UNKNOWN_SOURCE = '_unknown';

/**
 * POST /in/:source. Order matters: the body is read raw (any content type), verified against the
 * source's secrets, only then parsed for ids, and answered only once the batcher has committed it.
 */
export const receiverRoutes: FastifyPluginAsync<ReceiverRoutesOptions> = async (app, { ctx, batcher }) => {
  const sources = compileSources(ctx.config);
  app.addHook('onClose', async () => {
    await Promise.all([...sources.values()].map((s) => s.jwks?.close()));
  });
  const metrics = receiverMetrics(ctx.metrics);
  const retryAfter = String(ctx.config.receiver.retry_after);
  const ackDeadlineMs = ctx.config.receiver.ack_deadline;

  // Signatures cover the exact bytes: in this scope every content type is kept as a Buffer.
  app.removeAllContentTypeParsers();
  // Bodies are read before their signature can be checked: their bytes in flight are bounded per
  // process (receiver.in_flight_max_bytes), taken as they are read and given back once answered.
  const bodies = new BodiesInFlight(bodyBudget(ctx.config));
  metrics.watchBodyBytes(() => bodies.bytes);
  // Per address as the connection cap counts them (an IPv6 /64 is one); req.ip is the forwarded
  // client's behind a trusted proxy, so a proxy's clients do not share one share.
  app.addContentTypeParser('*', async (req: FastifyRequest) => bodies.read(req.raw, ctx.config.server.body_limit, addressKey(req.ip)));
  app.addHook('onRequest', async (req, reply) => bodies.track(req.raw, reply.raw));
  // Fastify refuses a Content-Type it cannot parse as a media type ("", "text", "a, b", ";") with 415
  // before any parser runs, so a validly signed delivery would get a permanent 4xx. The body is kept
  // raw whatever its type: the route sees one neutral type, and the sender's value is put back for
  // storage before the handler reads it.
  app.addHook('onRequest', async (req) => {
    const sent = req.headers['content-type'];
    if (sent !== undefined) {
      sentContentType.set(req, sent);
      req.headers['content-type'] = NEUTRAL_CONTENT_TYPE;
    }
  });

  app.addHook('onError', async (req, _reply, err) => {
    const name = (req.params as { source?: string }).source;
    const source = name !== undefined && sources.has(name) ? name : UNKNOWN_SOURCE;
    // Framework refusals (a malformed request, a body over the limit) count under their catalogue code,
    // the one the client was answered with; only the unexpected is INTERNAL.
    const code = toClientError(err).code;
    metrics.count(source, 'rejected', code);
    if (code.startsWith('SIGNATURE_') || code.startsWith('TIMESTAMP_')) {
      // Usually a secret mismatch after a rotation: worth an operator's eye, never with the headers.
      req.log.warn({ source, code }, 'webhook rejected');
    } else {
      req.log.debug({ source, code }, 'webhook rejected');
    }
  });

  // `/in/<source>/<alias>` is the same source (a provider's second URL, e.g. an invoice's callback_url):
  // one source, one deduplication. The alias is any one path segment, and only a label.
  app.post<{ Params: { source: string; alias?: string } }>('/in/:source/:alias?', async (req, reply) => {
    const source = sources.get(req.params.source);
    if (!source) throw new TekilError('SOURCE_NOT_FOUND', `no source named "${req.params.source}" is configured`);
    // The handler runs once the whole body is in: the acknowledgement deadline counts from here.
    const bodyReceivedAt = performance.now();
    const t = tracing();
    // Tracing off: one check. On: a receive span (child of the sender's traceparent, if any) with verify
    // and store under it; its traceparent is stored with the delivery, so the worker's spans join it.
    let span: Span | undefined;
    if (t) span = startReceiveSpan(t, req, source.name);
    try {
      const body = Buffer.isBuffer(req.body) ? req.body : EMPTY;
      const headers = req.headers;
      const contentType = sentContentType.get(req);
      if (contentType === undefined) delete headers['content-type'];
      else headers['content-type'] = contentType;
      // Each line of a repeated header on its own: Node joins them with ", ", which splits a signature
      // list in the wrong place (a proxy or a provider may send webhook-signature twice).
      const verifySpan = t && span ? startChild(t, span, 'tekil.verify') : undefined;
      let fields;
      try {
        const lines = headerLines(req);
        const verified = source.scheme.verify({
          body,
          headers: lines,
          secrets: source.secrets,
          namedSecrets: source.namedSecrets,
          publicKeys: source.jwks ? await publicKeysFor(source, lines) : source.publicKeys,
          toleranceSec: source.toleranceSec,
        });
        fields = source.extract({ body, headers, headerEventId: verified.headerEventId });
      } catch (err) {
        if (isTekilError(err) && err.code === 'JWKS_UNAVAILABLE') reply.header('retry-after', retryAfter);
        if (t && verifySpan) failSpan(t, verifySpan, err);
        throw err;
      } finally {
        verifySpan?.end();
      }
      span?.setAttribute('tekil.event_id', fields.eventId);
      const storeSpan = t && span ? startChild(t, span, 'tekil.store') : undefined;
      let receipt;
      try {
        // The deadline measures tekil's own work (verify, extract, commit), not the sender's upload: a
        // sender on a slow link is answered as soon as its row commits, and so is its retry.
        receipt = await withinDeadline(ackDeadlineMs, performance.now() - bodyReceivedAt, () =>
          batcher.receive({
            source: source.name,
            eventId: fields.eventId,
            resourceId: fields.resourceId,
            eventType: fields.eventType,
            occurredAt: fields.occurredAt,
            body,
            contentType: contentType?.trim() ? contentType : null,
            headers: span ? withTraceparent(source.pickHeaders(headers), traceparentOf(span)) : source.pickHeaders(headers),
          }),
        );
      } catch (err) {
        if (isTekilError(err) && err.statusCode === 503) reply.header('retry-after', retryAfter);
        if (t && storeSpan) failSpan(t, storeSpan, err);
        throw err;
      } finally {
        storeSpan?.end();
      }
      const { outcome } = receipt;
      span?.setAttribute('tekil.outcome', outcome);
      metrics.count(source.name, outcome);
      metrics.observeAck(source.name, reply.elapsedTime / 1000);
      // A provider that wants its own answer (PayTR: the text `OK`) gets it for a copy too, or it keeps sending.
      if (source.ack) return reply.code(source.ack.status).type(source.ack.content_type).send(source.ack.body);
      reply.type('application/json');
      if (outcome === 'accepted') return ACCEPTED;
      // A copy is told what came of the first ("daha önceki sonucu döndürün"): its status and result.
      return receipt.previous ? duplicateAnswer(receipt.previous) : DUPLICATE;
    } catch (err) {
      if (t && span) failSpan(t, span, err);
      throw err;
    } finally {
      span?.end();
    }
  });
};

/** The body budget's bounds from the settings (see BodiesInFlight). */
function bodyBudget(config: TekilConfig): BodyBudgetOptions {
  const { receiver, server } = config;
  return {
    maxBytes: receiver.in_flight_max_bytes,
    // Unset: a quarter, so it takes four addresses to fill the budget, and at least one whole body.
    maxBytesPerAddress: receiver.in_flight_max_bytes_per_address ?? Math.max(server.body_limit, Math.floor(receiver.in_flight_max_bytes / 4)),
    minRate: receiver.body_min_rate,
    rateWindowMs: receiver.body_rate_window,
  };
}

function startReceiveSpan(t: Tracing, req: FastifyRequest, source: string): Span {
  const sent = req.headers.traceparent;
  return t.tracer.startSpan(
    'tekil.receive',
    {
      kind: t.kind.server,
      attributes: { 'tekil.source': source, 'http.request.method': 'POST', 'http.route': '/in/:source', 'url.path': req.url.split('?')[0] ?? '' },
    },
    t.contextFrom(typeof sent === 'string' ? sent : undefined),
  );
}

/**
 * The stored header subset (JSON text) with the receive span's traceparent added: the worker reads it
 * back as the parent of its spans, and a handler sees it in `event.headers.traceparent`. A sender's own
 * traceparent is the receive span's parent, so the stored one belongs to the same trace.
 */
function withTraceparent(picked: string, traceparent: string): string {
  const entry = `"traceparent":${JSON.stringify(traceparent)}`;
  // A repeated key in jsonb keeps the last: the receive span's wins over a kept header of that name.
  return picked === '{}' ? `{${entry}}` : `${picked.slice(0, -1)},${entry}}`;
}
