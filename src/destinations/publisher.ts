/** One message as a broker destination receives it. */
export interface BrokerMessage {
  /** The event id the receiver deduplicates on: the AMQP message-id, JetStream's Nats-Msg-Id, the stream entry's `id` field. */
  id: string;
  /** The event type: the routing key or subject when the destination names none. */
  type: string;
  body: Buffer;
  contentType: string;
  /** The signature and tekil's own headers, sent as the message's headers (Redis: fields). */
  headers: Record<string, string>;
}

/** What the broker said: its confirm, ack or entry id (`detail`), else why the publish failed. */
export type BrokerAnswer = { ok: true; detail: string } | { ok: false; error: string };

/** An open connection to one broker destination, shared by every publish to it. */
export interface BrokerPublisher {
  /** Publishes and waits for the broker's answer; rejects when the connection fails meanwhile. */
  publish(message: BrokerMessage): Promise<BrokerAnswer>;
  /** True once the connection is gone: the pool opens a new one for the next publish. */
  readonly closed: boolean;
  close(): Promise<void>;
}
