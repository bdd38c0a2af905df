// The HTTP ceiling: the same Fastify stack answering without verifying or storing anything, on the
// receiver's route (bench:ingest) and on the publish route (bench:publish). BENCH_PROCESSES=N (or auto)
// runs N copies sharing the port through node:cluster, as tekil's --processes does.
import cluster from 'node:cluster';
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
  app.post('/in/:source', async (_req, reply) => {
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
