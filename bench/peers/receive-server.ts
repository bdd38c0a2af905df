// The receivers a team would write instead of tekil's, for bench:peers: Fastify, the same signature
// check as tekil's (the source's Paymos scheme, HMAC-SHA256 in constant time), the event parsed, then
// handed to a job queue before the 2xx:
//   PEER=pg-boss  boss.insert() on Postgres: the events of one event-loop turn in one statement (as tekil's
//                 group commit gathers them), each answered once it has committed; the job id derived from
//                 the event id (pg-boss's primary key: a repeat is not inserted twice); a pool of 10;
//   PEER=bullmq   queue.add() on Redis (BENCH_REDIS_URL), the event id as the job id (BullMQ's own
//                 de-duplication: a repeat is not added twice).
import Fastify from 'fastify';
import { createScheme } from '../../src/signing/index.js';
import { bullConnection } from './redis.js';
import { jobIdOf, TurnBatch, type JobInsert } from './turn-batch.js';

interface Event {
  event_id: string;
  event_type: string;
  occurred_at: string;
  data: { invoice_id: string };
}
type Enqueue = (source: string, event: Event, body: Buffer, contentType: string | undefined) => Promise<void>;

const secret = process.env.BENCH_SECRET!;
const scheme = createScheme('paymos');
let enqueue: Enqueue;
let close: () => Promise<void>;
if (process.env.PEER === 'pg-boss') {
  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: process.env.DATABASE_URL!, max: 10, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue('events');
  const batch = new TurnBatch<JobInsert>((jobs) => boss.insert(jobs));
  enqueue = (source, event, body, contentType) =>
    batch.add({
      name: 'events',
      id: jobIdOf(source, event.event_id),
      data: {
        source,
        event_id: event.event_id,
        resource_id: event.data.invoice_id,
        event_type: event.event_type,
        occurred_at: event.occurred_at,
        body: body.toString('utf8'),
        content_type: contentType,
      },
    });
  close = () => boss.stop({ graceful: false, wait: true });
} else if (process.env.PEER === 'bullmq') {
  const { Queue } = await import('bullmq');
  const queue = new Queue('events', { connection: bullConnection(process.env.BENCH_REDIS_URL!), prefix: process.env.BENCH_REDIS_PREFIX! });
  enqueue = async (source, event, body, contentType) => {
    await queue.add(
      'event',
      {
        source,
        resource_id: event.data.invoice_id,
        event_type: event.event_type,
        occurred_at: event.occurred_at,
        body: body.toString('utf8'),
        content_type: contentType,
      },
      { jobId: event.event_id },
    );
  };
  close = () => queue.close();
} else {
  throw new Error(`PEER must be pg-boss or bullmq, not ${process.env.PEER}`);
}

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post<{ Params: { source: string } }>('/in/:source', async (req, reply) => {
  const body = req.body as Buffer;
  try {
    scheme.verify({ body, headers: req.headers, secrets: [secret], toleranceSec: 3600 });
  } catch {
    return reply.code(401).send({ error: 'SIGNATURE_INVALID' });
  }
  const event = JSON.parse(body.toString('utf8')) as Event;
  try {
    await enqueue(req.params.source, event, body, req.headers['content-type']);
  } catch {
    return reply.code(503).send({ error: 'STORE_UNAVAILABLE' });
  }
  reply.type('application/json');
  return '{"status":"accepted"}';
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.stdout.write('ready\n');
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(close)
      .then(() => process.exit(0)),
);
