import type { TekilConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { TekilError } from '../errors.js';
import { parseTraceparent, setTracing, tracing, type Tracing } from './tracing.js';

/** Where spans are posted: the endpoint as given when it already names the traces path, else <endpoint>/v1/traces. */
export function tracesUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/traces') ? trimmed : `${trimmed}/v1/traces`;
}

/**
 * Starts tracing for this process when an OTLP endpoint is set (TEKIL_OTLP_ENDPOINT or
 * telemetry.otlp_endpoint); otherwise does nothing and loads nothing. The SDK is imported here, on
 * demand, so a process without telemetry never loads it. Spans are batched and posted as OTLP/HTTP
 * JSON; `shutdown` exports what is left. Idempotent: a second start in one process reuses the first.
 */
export async function startTelemetry(config: TekilConfig, otlpEndpoint: string | undefined, logger: Logger): Promise<Tracing | undefined> {
  if (!otlpEndpoint) return undefined;
  const existing = tracing();
  if (existing) return existing;
  let url: string;
  try {
    url = tracesUrl(new URL(otlpEndpoint).toString());
  } catch (err) {
    throw new TekilError('CONFIG_INVALID', `TEKIL_OTLP_ENDPOINT / telemetry.otlp_endpoint is not a URL: ${otlpEndpoint}`, { cause: err });
  }
  const [api, node, exporterModule, resources, semconv] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const { service_name: serviceName, sample_ratio: ratio } = config.telemetry;
  const exporter = new exporterModule.OTLPTraceExporter({ url, timeoutMillis: 10_000 });
  const provider = new node.NodeTracerProvider({
    resource: resources.resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: serviceName, 'process.pid': process.pid }),
    // A trace begun upstream (a provider's traceparent, the stored receive span) keeps its sender's decision.
    sampler: new node.ParentBasedSampler({ root: new node.TraceIdRatioBasedSampler(ratio) }),
    spanProcessors: [new node.BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000, maxQueueSize: 8192, maxExportBatchSize: 1024 })],
  });
  // Sets the global tracer provider, the AsyncLocalStorage context manager and the W3C propagator, so an
  // application that traces with @opentelemetry/api sees tekil's spans under its own (and the reverse).
  provider.register();
  const tracer = provider.getTracer('tekil');
  const t: Tracing = {
    tracer,
    kind: {
      server: api.SpanKind.SERVER,
      client: api.SpanKind.CLIENT,
      producer: api.SpanKind.PRODUCER,
      consumer: api.SpanKind.CONSUMER,
      internal: api.SpanKind.INTERNAL,
    },
    error: api.SpanStatusCode.ERROR,
    contextOf: (span) => api.trace.setSpan(api.context.active(), span),
    contextFrom(traceparent) {
      const parsed = parseTraceparent(traceparent);
      return parsed ? api.trace.setSpanContext(api.ROOT_CONTEXT, { ...parsed, isRemote: true }) : api.ROOT_CONTEXT;
    },
    active: () => api.context.active(),
    within: (span, fn) => api.context.with(api.trace.setSpan(api.context.active(), span), fn),
    async shutdown() {
      setTracing(undefined);
      await provider.shutdown().catch((err: unknown) => logger.warn({ err }, 'exporting the last spans failed'));
    },
  };
  setTracing(t);
  logger.info({ url, serviceName, sampleRatio: ratio }, 'tracing on: spans go to the OTLP endpoint');
  return t;
}
