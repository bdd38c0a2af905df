import type { Span } from '@opentelemetry/api';
import type { SourceConfig } from '../config/source.js';
import { parseFormFields, type RequestView } from '../signing/request-fields.js';
import type { InboxClaimedDelivery } from './claim-due-deliveries.js';
import type { InboxCompletion } from './complete-deliveries.js';
import type { InboxEvent } from './handlers.js';
import type { GuardVerdict } from './ordering-guard.js';

/**
 * One claimed delivery on its way through a batch: the claimed row, its source, and what the batch
 * learns of it. It is a request view too: the ordering guard reads its locators from the stored body
 * and headers as the receiver read the live request.
 */
export class BatchDelivery implements RequestView {
  readonly body: Buffer;
  startedAt = Date.now();
  verdict?: Extract<GuardVerdict, { kind: 'apply' }>;
  /** With tracing on: this delivery's processing span (a child of its receive span), and how it ended. */
  span?: Span;
  outcome?: InboxCompletion['status'];
  #parsed = false;
  #payload: unknown;
  #form: Map<string, string[]> | undefined;

  constructor(
    readonly row: InboxClaimedDelivery,
    readonly source: SourceConfig | undefined,
  ) {
    const b = row.body;
    this.body = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  }

  /** The body parsed as JSON on first use (undefined when it is not JSON): unread, it costs nothing. */
  get payload(): unknown {
    if (!this.#parsed) {
      this.#parsed = true;
      try {
        this.#payload = JSON.parse(this.body.toString('utf8'));
      } catch {
        this.#payload = undefined; // not JSON: handlers still get the raw body
      }
    }
    return this.#payload;
  }

  /** The headers kept with the delivery (src/receiver/headers.ts), lower-cased. */
  get headers(): Record<string, string> {
    return this.row.headers;
  }

  bodyJson(): unknown {
    return this.payload;
  }

  bodyText(): string {
    return this.body.toString('utf8');
  }

  formFields(): Map<string, string[]> {
    this.#form ??= parseFormFields(this.body);
    return this.#form;
  }
}

/** A delivery as an in-process handler sees it (InboxEvent); the payload is the validated one when the handler has a schema. */
export class HandlerEvent implements InboxEvent {
  readonly source: string;
  readonly eventId: string;
  readonly resourceId: string | null;
  readonly type: string | null;
  readonly occurredAt: Date | null;
  readonly receivedAt: Date;
  readonly body: Buffer;
  readonly contentType: string | null;
  readonly headers: Record<string, string>;
  readonly attempt: number;

  constructor(
    private readonly delivery: BatchDelivery,
    private readonly validated: { payload: unknown } | undefined,
  ) {
    const r = delivery.row;
    this.source = r.source;
    this.eventId = r.event_id;
    this.resourceId = r.resource_id;
    this.type = r.event_type;
    this.occurredAt = r.occurred_at;
    this.receivedAt = r.received_at;
    this.body = delivery.body;
    this.contentType = r.content_type;
    this.headers = r.headers;
    this.attempt = r.attempts;
  }

  get payload(): unknown {
    return this.validated ? this.validated.payload : this.delivery.payload;
  }
}
