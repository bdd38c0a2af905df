import { randomBytes } from 'node:crypto';
import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect, type StoredMsg } from 'nats';
import { Redis } from 'ioredis';
import type { BrokerKind } from '../../src/destinations/broker-url.js';

/** The machine's own brokers (CI starts them: .ci/run). */
export const BROKER_PORTS: Readonly<Record<BrokerKind, number>> = { rabbitmq: 5672, nats: 4222, redis: 6379 };

/** A message as the merchant's consumer reads it from the broker. */
export interface ReadMessage {
  /** The id the broker's own field carries: AMQP message-id, Nats-Msg-Id, the entry's `id` field. */
  id: string;
  type: string | undefined;
  headers: Record<string, string>;
  body: string;
}

/**
 * A place on a real broker that belongs to one test (a queue, a stream, a Redis stream key with a
 * random name), the URL tekil publishes to it with (pointed at `port`: the broker's or a proxy's), and
 * the broker's own client reading what arrived.
 */
export interface BrokerTarget {
  kind: BrokerKind;
  url(port?: number): string;
  read(): Promise<ReadMessage[]>;
  remove(): Promise<void>;
}

export async function brokerTarget(kind: BrokerKind): Promise<BrokerTarget> {
  const name = `tekil_test_${randomBytes(5).toString('hex')}`;
  switch (kind) {
    case 'rabbitmq':
      return rabbitTarget(name);
    case 'nats':
      return natsTarget(name);
    case 'redis':
      return redisTarget(name);
  }
}

async function rabbitTarget(queue: string): Promise<BrokerTarget> {
  const model = await amqpConnect('amqp://guest:guest@127.0.0.1:5672');
  const channel = await model.createChannel();
  await channel.assertQueue(queue, { durable: true });
  const received: ReadMessage[] = [];
  await channel.consume(
    queue,
    (msg) => {
      if (!msg) return;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(msg.properties.headers ?? {})) headers[k] = String(v);
      received.push({ id: String(msg.properties.messageId), type: msg.properties.type as string | undefined, headers, body: msg.content.toString() });
    },
    { noAck: true },
  );
  return {
    kind: 'rabbitmq',
    url: (port = 5672) => `amqp://guest:guest@127.0.0.1:${port}/?routing_key=${queue}`,
    read: async () => [...received],
    async remove() {
      await channel.deleteQueue(queue).catch(() => {});
      await model.close().catch(() => {});
    },
  };
}

async function natsTarget(name: string): Promise<BrokerTarget> {
  const nc = await natsConnect({ servers: '127.0.0.1:4222' });
  const jsm = await nc.jetstreamManager();
  const subject = `tekil.test.${name}`;
  await jsm.streams.add({ name, subjects: [subject] });
  return {
    kind: 'nats',
    url: (port = 4222) => `nats://127.0.0.1:${port}?subject=${subject}`,
    async read() {
      const info = await jsm.streams.info(name);
      const out: ReadMessage[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m: StoredMsg = await jsm.streams.getMessage(name, { seq });
        const headers: Record<string, string> = {};
        for (const k of m.header.keys()) headers[k.toLowerCase()] = m.header.get(k);
        out.push({ id: m.header.get('Nats-Msg-Id'), type: undefined, headers, body: m.string() });
      }
      return out;
    },
    async remove() {
      await jsm.streams.delete(name).catch(() => {});
      await nc.close();
    },
  };
}

async function redisTarget(stream: string): Promise<BrokerTarget> {
  const client = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
  await client.connect();
  return {
    kind: 'redis',
    url: (port = 6379) => `redis://127.0.0.1:${port}/0?stream=${stream}`,
    async read() {
      const entries = await client.xrange(stream, '-', '+');
      return entries.map(([, flat]) => {
        const fields: Record<string, string> = {};
        for (let i = 0; i < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
        const { id = '', type, body = '', ...headers } = fields;
        return { id, type, headers, body };
      });
    },
    async remove() {
      await client.del(stream).catch(() => {});
      client.disconnect();
    },
  };
}
