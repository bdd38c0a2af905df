import type { Attributes, Context as TraceContext, Span, SpanKind, SpanStatusCode, Tracer, TimeInput } from '@opentelemetry/api';

/**
 * The tracing of this process, or undefined when telemetry is off. Only types of OpenTelemetry are
 * imported here: with tracing off no OpenTelemetry code is loaded, and a traced spot costs one check
 * of `tracing()` (see start.ts for what loads it).
 */
export interface Tracing {
  readonly tracer: Tracer;
  /** Numbers from @opentelemetry/api, kept here so callers need not load it. */
  readonly kind: { server: SpanKind; client: SpanKind; producer: SpanKind; consumer: SpanKind; internal: SpanKind };
  readonly error: SpanStatusCode;
  /** The context a span is the current span of (a child started with it is the span's child). */
  contextOf(span: Span): TraceContext;
  /** The context a W3C traceparent names (as a remote parent); the root context when it is not one. */
  contextFrom(traceparent: string | undefined | null): TraceContext;
  /** The process's current context (the caller's own span, when an application traces too). */
  active(): TraceContext;
  /** Runs `fn` with `span` current: spans an application starts inside (a handler's) are its children. */
  within<T>(span: Span, fn: () => T): T;
  /** Exports what is buffered and stops; called once, at shutdown. */
  shutdown(): Promise<void>;
}

let current: Tracing | undefined;

/** This process's tracing; undefined when telemetry is off. */
export function tracing(): Tracing | undefined {
  return current;
}

export function setTracing(t: Tracing | undefined): void {
  current = t;
}

/** The W3C `traceparent` header value that names `span` (version 00). */
export function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A child of `parent` (a span or a context) named `name`. */
export function startChild(
  t: Tracing,
  parent: Span | TraceContext,
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; startTime?: TimeInput } = {},
): Span {
  const ctx = isSpan(parent) ? t.contextOf(parent) : parent;
  return t.tracer.startSpan(name, options, ctx);
}

/** Marks the span failed with the error's code or message (never a body or a secret: callers pass tekil's own errors). */
export function failSpan(t: Tracing, span: Span, err: unknown): void {
  const code = typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  const message = err instanceof Error ? err.message : String(err);
  span.setStatus({ code: t.error, message: code ?? message });
  span.setAttribute('error.type', code ?? (err instanceof Error ? err.name : 'Error'));
}

function isSpan(x: Span | TraceContext): x is Span {
  return typeof (x as Span).spanContext === 'function';
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The ids a version-00 traceparent carries; undefined for anything else (or the all-zero ids). */
export function parseTraceparent(value: string | undefined | null): { traceId: string; spanId: string; traceFlags: number } | undefined {
  if (!value) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) };
}
