// The HTTP ceiling: the same Fastify stack answering without verifying or storing anything, on the
// receiver's route (bench:ingest) and on the publish route (bench:publish).
import Fastify from 'fastify';

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
process.stdout.write('ready\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
