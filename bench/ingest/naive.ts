// The receiver people write by hand: verify, parse, one INSERT … ON CONFLICT per request on a pool.
import Fastify from 'fastify';
import pg from 'pg';
import { createScheme } from '../../src/signing/index.js';

const secret = process.env.BENCH_SECRET!;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const scheme = createScheme('paymos');
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
  const event = JSON.parse(body.toString('utf8')) as { event_id: string; event_type: string; occurred_at: string; data: { invoice_id: string } };
  try {
    const res = await pool.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type, headers)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source, event_id) DO NOTHING RETURNING event_id`,
      [
        req.params.source,
        event.event_id,
        event.data.invoice_id,
        event.event_type,
        event.occurred_at,
        body,
        req.headers['content-type'] ?? null,
        JSON.stringify({ 'content-type': req.headers['content-type'], 'x-webhook-id': req.headers['x-webhook-id'] }),
      ],
    );
    reply.type('application/json');
    return res.rows.length ? '{"status":"accepted"}' : '{"status":"duplicate"}';
  } catch {
    return reply.code(503).send({ error: 'STORE_UNAVAILABLE' });
  }
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.stdout.write('ready\n');
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
