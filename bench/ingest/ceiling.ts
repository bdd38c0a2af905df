// The HTTP ceiling: the same Fastify stack answering without verifying or storing anything, on the
// receiver's route (bench:ingest) and on the publish route (bench:publish). BENCH_PROCESSES=N (or auto)
// runs N copies sharing the port through node:cluster, as tekil's --processes does.
// BENCH_CEILING_HMAC=<secret>: the receiver's route also checks the request's Paymos signature (one
// HMAC-SHA256 over `<t>.<body>`, compared in constant time) and answers 401 when it does not match: the
// least any webhook receiver does per request, as a reference between the bare ceiling and tekil.
import cluster from 'node:cluster';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import Fastify from 'fastify';

const asked = process.env.BENCH_PROCESSES ?? '1';
const processes = asked === 'auto' ? availableParallelism() : Number(asked);

if (processes > 1 && cluster.isPrimary) {
  let listening = 0;
  cluster.on('listening', () => {
    if (++listening === processes) process.stdout.write('ready\n');
  });
  for (let i = 0; i < processes; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  });
} else {
  const app = Fastify({ logger: false });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const secret = process.env.BENCH_CEILING_HMAC;
  app.post('/in/:source', async (req, reply) => {
    if (secret !== undefined && !signatureMatches(secret, req.headers['x-webhook-signature'], req.body as Buffer)) {
      reply.code(401);
    }
    reply.type('application/json');
    return '{"status":"accepted"}';
  });
  app.post('/api/v1/messages', async (_req, reply) => {
    reply.code(202).type('application/json');
    return '{"id":"evt_0000000000000000000000"}';
  });
  await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
  if (cluster.isPrimary) process.stdout.write('ready\n');
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

/** `t=<unix>,v1=<hex>` over `<t>.<body>`, without tekil's parsing: the bare minimum of a check. */
function signatureMatches(secret: string, header: string | string[] | undefined, body: Buffer): boolean {
  if (typeof header !== 'string') return false;
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'));
}
