// The receiver people write by hand: verify, parse, one INSERT … ON CONFLICT per request on a pool.
// It writes into a plain table of its own (NAIVE_TABLE_SQL, no trigger: tekil's inbox_deliveries
// NOTIFYs on every commit, and notifying commits serialise under one lock, so a peer on that table could
// not share a WAL flush between its connections), with a named statement, prepared once per connection
// as node-postgres does for a query given a `name`.
import Fastify from 'fastify';
import pg from 'pg';
import { createScheme } from '../../src/signing/index.js';
import { NAIVE_INSERT } from './naive-table.js';

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
    const res = await pool.query({
      ...NAIVE_INSERT,
      values: [
        req.params.source,
        event.event_id,
        event.data.invoice_id,
        event.event_type,
        event.occurred_at,
        body,
        req.headers['content-type'] ?? null,
        JSON.stringify({ 'content-type': req.headers['content-type'], 'x-webhook-id': req.headers['x-webhook-id'] }),
      ],
    });
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
