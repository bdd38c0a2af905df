import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TekilError } from '../errors.js';
import { metricsTokenMatches } from '../metrics.js';

export interface MetricsListenerOptions {
  host: string;
  port: number;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | undefined;
  contentType: string;
  read: () => Promise<string>;
}

export interface MetricsListener {
  /** e.g. http://127.0.0.1:9464 */
  url: string;
  close(): Promise<void>;
}

function answer(res: ServerResponse, error: TekilError): void {
  res.writeHead(error.statusCode, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(error.toJSON()));
}

/**
 * `/metrics` on a port of its own (`server.metrics_port`), so the public port that providers post to
 * does not show tekil's internals. One route and nothing else: a plain HTTP server, no framework.
 */
export async function startMetricsListener(options: MetricsListenerOptions): Promise<MetricsListener> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      answer(res, new TekilError('NOT_FOUND', `no route ${req.method} ${path} (this port serves GET /metrics only)`));
      return;
    }
    if (options.token !== undefined && !metricsTokenMatches(options.token, req.headers.authorization)) {
      answer(res, new TekilError('UNAUTHORIZED', 'missing or wrong metrics token (Authorization: Bearer <TEKIL_METRICS_TOKEN>)'));
      return;
    }
    options.read().then(
      (text) => res.writeHead(200, { 'content-type': options.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => answer(res, new TekilError('INTERNAL', 'metrics could not be read', { cause: err })),
    );
  });
  // Scrapers keep connections alive; close() must not wait for them.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen({ host: options.host, port: options.port }, resolve));
  const { address, port } = server.address() as AddressInfo;
  const shown = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${shown}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
