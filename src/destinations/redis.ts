import { Redis } from 'ioredis';
import type { BrokerDestination } from './broker-url.js';
import type { BrokerAnswer, BrokerMessage, BrokerPublisher } from './publisher.js';

/**
 * A Redis Streams destination: one connection; each delivery is an XADD whose entry holds the event id
 * (`id`), its type, content type, the signature headers and the body. It succeeds when Redis answers the
 * entry's id. Redis has no deduplication key: a repeat is a new entry with the same `id` field.
 * The client neither queues commands while disconnected nor reconnects: a lost connection fails the
 * attempt and the pool opens another for the next one.
 */
export class RedisPublisher implements BrokerPublisher {
  closed = false;

  private constructor(
    private readonly client: Redis,
    private readonly destination: BrokerDestination,
  ) {
    const lost = () => {
      this.closed = true;
    };
    client.on('end', lost);
    client.on('close', lost);
    client.on('error', lost);
  }

  static async open(destination: BrokerDestination, address: string, timeoutMs: number): Promise<RedisPublisher> {
    const client = new Redis({
      host: address,
      port: destination.port,
      ...(destination.username ? { username: destination.username } : {}),
      ...(destination.password ? { password: destination.password } : {}),
      db: destination.db,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: timeoutMs,
      connectionName: 'tekil',
    });
    // Until the publisher listens, a failed connect must not be an unhandled 'error' event.
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (err) {
      client.disconnect();
      throw err;
    }
    return new RedisPublisher(client, destination);
  }

  async publish(message: BrokerMessage): Promise<BrokerAnswer> {
    const fields: Array<string | Buffer> = ['id', message.id, 'type', message.type, 'content-type', message.contentType];
    for (const [name, value] of Object.entries(message.headers)) fields.push(name, value);
    fields.push('body', message.body);
    const cap = this.destination.maxlen === undefined ? [] : ['MAXLEN', '~', String(this.destination.maxlen)];
    const entry = await this.client.xadd(this.destination.stream, ...cap, '*', ...fields);
    return { ok: true, detail: `stream ${this.destination.stream} entry ${entry}` };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.client.disconnect();
  }
}
