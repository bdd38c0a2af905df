// The broker lines of bench:dispatch: for each kind, the broker's own client publishing the same
// messages with the same confirms at the same concurrency (RabbitMQ: a confirm channel, persistent and
// mandatory; NATS: a JetStream publish with Nats-Msg-Id, waiting for the ack; Redis: XADD), and tekil's
// dispatcher delivering them to an endpoint of that kind. Each side publishes to a queue or stream of
// its own, made for the run and removed after it (JetStream would otherwise answer the second side's
// ids as duplicates without storing them).
import { randomBytes } from 'node:crypto';
import { connect as amqpConnect } from 'amqplib';
import { Redis } from 'ioredis';
import { connect as natsConnect } from 'nats';
import type { BrokerKind } from '../../src/destinations/broker-url.js';
import { endpointStore } from '../../src/outbox/endpoints.js';
import { EVERY_TENANT } from '../../src/scope.js';
import type { createPostgresDb } from '../../src/store/postgres.js';
import { runTekilDispatch, type TekilDispatch, type TekilDispatchRun } from './tekil.js';

type PostgresDb = ReturnType<typeof createPostgresDb>;

/** A queue or stream for one run: the URL tekil publishes to, the broker's own publish, and its removal. */
interface BrokerPlace {
  url: string;
  /** The broker's own client: publishes every body (`concurrency` at a time), each waiting for its confirm. */
  publishAll(bodies: Buffer[], concurrency: number): Promise<void>;
  remove(): Promise<void>;
}

async function inParallel(bodies: Buffer[], concurrency: number, one: (body: Buffer, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const i = next++;
        await one(bodies[i]!, i);
      }
    }),
  );
}

async function place(kind: BrokerKind): Promise<BrokerPlace> {
  const name = `tekil_bench_${randomBytes(4).toString('hex')}`;
  if (kind === 'rabbitmq') {
    const model = await amqpConnect('amqp://guest:guest@127.0.0.1:5672');
    const admin = await model.createChannel();
    await admin.assertQueue(name, { durable: true });
    return {
      url: `amqp://guest:guest@127.0.0.1:5672/?routing_key=${name}`,
      async publishAll(bodies, concurrency) {
        const channel = await model.createConfirmChannel();
        await inParallel(
          bodies,
          concurrency,
          (body, i) =>
            new Promise<void>((resolve, reject) =>
              channel.publish('', name, body, { messageId: `msg_${i}`, persistent: true, mandatory: true, contentType: 'application/json' }, (err) =>
                err ? reject(err) : resolve(),
              ),
            ),
        );
        await channel.close();
      },
      async remove() {
        await admin.deleteQueue(name);
        await model.close();
      },
    };
  }
  if (kind === 'nats') {
    const nc = await natsConnect({ servers: '127.0.0.1:4222' });
    const jsm = await nc.jetstreamManager();
    const subject = `tekil.bench.${name}`;
    await jsm.streams.add({ name, subjects: [subject] });
    const js = nc.jetstream();
    return {
      url: `nats://127.0.0.1:4222?subject=${subject}`,
      async publishAll(bodies, concurrency) {
        await inParallel(bodies, concurrency, async (body, i) => {
          await js.publish(subject, body, { msgID: `msg_${i}` });
        });
      },
      async remove() {
        await jsm.streams.delete(name);
        await nc.close();
      },
    };
  }
  const client = new Redis({ host: '127.0.0.1', port: 6379 });
  return {
    url: `redis://127.0.0.1:6379/0?stream=${name}`,
    async publishAll(bodies, concurrency) {
      await inParallel(bodies, concurrency, async (body, i) => {
        await client.xadd(name, '*', 'id', `msg_${i}`, 'body', body);
      });
    },
    async remove() {
      await client.del(name);
      client.disconnect();
    },
  };
}

/** The broker's own client: deliveries a second and this process's CPU per delivery (µs). */
export async function brokerClientRate(kind: BrokerKind, bodies: Buffer[], concurrency: number): Promise<{ rate: number; nodeUs: number }> {
  const where = await place(kind);
  try {
    const started = performance.now();
    const cpu0 = process.cpuUsage();
    await where.publishAll(bodies, concurrency);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return { rate: bodies.length / seconds, nodeUs: (cpu.user + cpu.system) / bodies.length };
  } finally {
    await where.remove();
  }
}

/** tekil's dispatcher with the bench's endpoint pointed at a fresh queue or stream of this kind, then back. */
export async function tekilBrokerRun(db: PostgresDb, dbName: string, setup: TekilDispatch, kind: BrokerKind, sinkUrl: string): Promise<TekilDispatchRun> {
  const endpoints = endpointStore({ sending: setup.config.sending, box: setup.box, guard: setup.guard });
  const [endpoint] = await endpoints.list(db, EVERY_TENANT);
  const where = await place(kind);
  try {
    await endpoints.update(db, endpoint!.id, { url: where.url });
    return await runTekilDispatch(db, dbName, setup);
  } finally {
    await endpoints.update(db, endpoint!.id, { url: sinkUrl });
    await where.remove();
  }
}
