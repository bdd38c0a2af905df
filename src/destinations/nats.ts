import { connect, headers as natsHeaders, type JetStreamClient, type NatsConnection } from 'nats';
import type { BrokerDestination } from './broker-url.js';
import type { BrokerAnswer, BrokerMessage, BrokerPublisher } from './publisher.js';

/**
 * A NATS JetStream destination: one connection. A delivery succeeds on the stream's ack; the message id
 * goes as `Nats-Msg-Id`, so a repeat inside the stream's duplicate window is stored once (the ack says
 * `duplicate`). The connection does not reconnect by itself: a lost one is dropped from the pool and
 * the next attempt opens another, on the endpoint's ladder.
 */
export class NatsPublisher implements BrokerPublisher {
  closed = false;
  private readonly js: JetStreamClient;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly destination: BrokerDestination,
    private readonly timeoutMs: number,
  ) {
    this.js = nc.jetstream();
    void nc.closed().then(() => {
      this.closed = true;
    });
  }

  static async open(destination: BrokerDestination, address: string, timeoutMs: number): Promise<NatsPublisher> {
    const server = address.includes(':') ? `[${address}]:${destination.port}` : `${address}:${destination.port}`;
    // A URL with only a user part (nats://token@host) carries a token, as the NATS tools read it.
    const auth =
      destination.username && destination.password
        ? { user: destination.username, pass: destination.password }
        : destination.username
          ? { token: destination.username }
          : {};
    const nc = await connect({ servers: server, reconnect: false, timeout: timeoutMs, name: 'tekil', ...auth });
    return new NatsPublisher(nc, destination, timeoutMs);
  }

  async publish(message: BrokerMessage): Promise<BrokerAnswer> {
    const h = natsHeaders();
    h.set('content-type', message.contentType);
    for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
    const ack = await this.js.publish(this.destination.subject ?? message.type, message.body, { msgID: message.id, headers: h, timeout: this.timeoutMs });
    return { ok: true, detail: `stream ${ack.stream} seq ${ack.seq}${ack.duplicate ? ' (duplicate: the stream already holds this id)' : ''}` };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.nc.close().catch(() => {});
  }
}
