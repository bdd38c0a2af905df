import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the chaos run's receiving ends saw, keyed by the id inside the body: the outbox endpoint
 * records each message's `webhook-id` headers, the forward target each event's `Idempotency-Key`s.
 * One request in ten is refused with 503 the first time its id arrives, so repeats happen for sure.
 */
export interface RecordingSink {
  url: string;
  /** id in the body → the distinct header values that came with it. */
  seen: Map<string, Set<string>>;
  requests: number;
  close(): Promise<void>;
}

const refusedOnce = (id: string) => createHash('sha1').update(id).digest()[0]! % 10 === 0;

export async function startRecordingSink(
  read: (body: Record<string, unknown>, headers: IncomingHttpHeaders) => { id: string; header: string },
): Promise<RecordingSink> {
  const seen = new Map<string, Set<string>>();
  const sink: RecordingSink = { url: '', seen, requests: 0, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      sink.requests++;
      let id: string;
      let header: string;
      try {
        ({ id, header } = read(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>, req.headers));
      } catch {
        res.writeHead(400).end('unreadable');
        return;
      }
      const first = !seen.has(id);
      const values = seen.get(id) ?? new Set<string>();
      values.add(header);
      seen.set(id, values);
      res.writeHead(first && refusedOnce(id) ? 503 : 200).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  sink.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return sink;
}

const headerValue = (headers: IncomingHttpHeaders, name: string): string => {
  const v = headers[name];
  return (Array.isArray(v) ? v.join(',') : v) ?? '(none)';
};

/** The outbox endpoint: the message id is the envelope's `event_id` (`evt_…`); the header is `webhook-id`. */
export const outboxSink = () => startRecordingSink((body, headers) => ({ id: String(body.event_id), header: headerValue(headers, 'webhook-id') }));

/** The forward target: the event id is the provider's `event_id`; the header is `idempotency-key`. */
export const forwardSink = () => startRecordingSink((body, headers) => ({ id: String(body.event_id), header: headerValue(headers, 'idempotency-key') }));
