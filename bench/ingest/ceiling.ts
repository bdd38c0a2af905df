// The HTTP ceiling: the same Fastify stack answering 200 without verifying or storing anything.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/in/:source', async (_req, reply) => {
  reply.type('application/json');
  return '{"status":"accepted"}';
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
