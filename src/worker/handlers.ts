import type { Queryable } from '../store/db.js';
import type { Logger } from '../logger.js';
import { TekilError } from '../errors.js';

/** One recorded delivery as a handler sees it. */
export interface InboxEvent<P = unknown> {
  source: string;
  /** The provider's delivery id: the same on every retry and manual resend. */
  eventId: string;
  /** The business object the event is about (invoice, payment…), when the source maps one. */
  resourceId: string | null;
  type: string | null;
  occurredAt: Date | null;
  receivedAt: Date;
  /** The body parsed as JSON (validated when the handler was registered with a schema). */
  payload: P;
  /** The raw bytes exactly as received. */
  body: Buffer;
  contentType: string | null;
  headers: Record<string, string>;
  /** 1 on the first attempt. */
  attempt: number;
}

export interface HandlerContext {
  /**
   * The transaction that marks this delivery `done`. Writes made through it commit together with
   * that mark, or not at all (a throw, a crash or a lost connection rolls them back).
   */
  tx: Queryable;
  /** `<source>:<event_id>`: pass it to outside services so a retried call is not done twice. */
  idempotencyKey: string;
  logger: Logger;
}

/** What a handler may answer: the local record it touched (an order id), or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing is typed void, and must be accepted.
export type HandlerResult = void | undefined | string | { resultRef?: string | null | undefined };

export type Handler<P = unknown> = (event: InboxEvent<P>, ctx: HandlerContext) => Promise<HandlerResult> | HandlerResult;

/**
 * Thrown by a handler when retrying cannot help (the event is invalid for this application): the
 * delivery goes to the review queue (`dead`) at once instead of being retried.
 */
export class PermanentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** Anything with zod's `safeParse` shape validates a payload before the handler runs. */
export interface PayloadSchema<P> {
  safeParse(value: unknown): { success: true; data: P } | { success: false; error: { message: string } };
}

export interface HandlerOptions<P> {
  /** A failed validation is permanent: the delivery is `dead` without a retry. */
  schema?: PayloadSchema<P>;
}

export interface RegisteredHandler {
  handler: Handler<unknown>;
  schema?: PayloadSchema<unknown> | undefined;
}

/**
 * In-process handlers by source and event type. `*` matches any source or any type; the most
 * specific registration wins (source+type, then source+`*`, then `*`+type, then `*`+`*`).
 */
export class HandlerRegistry {
  readonly #handlers = new Map<string, RegisteredHandler>();

  on<P = unknown>(source: string, eventType: string, handler: Handler<P>, options: HandlerOptions<P> = {}): this {
    const key = `${source}\u0000${eventType}`;
    if (this.#handlers.has(key)) throw new TekilError('CONFIG_INVALID', `a handler for ${source} / ${eventType} is already registered`);
    this.#handlers.set(key, { handler: handler as Handler<unknown>, schema: options.schema as PayloadSchema<unknown> | undefined });
    return this;
  }

  resolve(source: string, eventType: string | null): RegisteredHandler | undefined {
    const type = eventType ?? '';
    return (
      this.#handlers.get(`${source}\u0000${type}`) ??
      this.#handlers.get(`${source}\u0000*`) ??
      this.#handlers.get(`*\u0000${type}`) ??
      this.#handlers.get('*\u0000*')
    );
  }

  get size(): number {
    return this.#handlers.size;
  }
}

/** Starts an empty handler registry: `defineHandlers().on('shop', 'invoice.paid', fn)`. */
export function defineHandlers(): HandlerRegistry {
  return new HandlerRegistry();
}
