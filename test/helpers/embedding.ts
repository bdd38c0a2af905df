// The pieces of the portal's embedding tests (test/portal-browser*.test.ts): a provider's panel page
// that frames a URL, a self-signed certificate, and a TLS-ending reverse proxy in front of tekil.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Listening {
  /** What a browser calls it: `http://127.0.0.1:…`, or `https://<host>:…` for TLS. */
  origin: string;
  close(): Promise<void>;
}

/** A certificate and its key for `localhost` and `127.0.0.1`, valid for a day, in PEM. */
export interface TestCertificate {
  cert: string;
  key: string;
}

/** Made with the machine's openssl (no dependency): both names the tests use, one EC key. */
export function selfSignedCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'tekil-tls-'));
  try {
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
        ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', key, '-out', cert],
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Listens on 127.0.0.1 (over TLS when given a certificate); `host` is the name the origin uses. */
async function listen(handler: Handler, tls?: TestCertificate, host = '127.0.0.1'): Promise<Listening & { server: Server }> {
  const server: Server = tls ? createHttpsServer(tls, handler) : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    origin: `${tls ? 'https' : 'http'}://${host}:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The provider's panel: a page that shows `?src=` in an iframe. Over TLS its origin is named
 * `https://localhost:…`, another site than tekil's `127.0.0.1`, as a panel on its own domain is.
 */
export async function startFramingPage(tls?: TestCertificate): Promise<Listening> {
  const page: Handler = (req, res) => {
    const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
    const attr = src.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Provider panel</title><h1>Provider panel</h1><iframe id="portal" src="${attr}" width="1200" height="640"></iframe>`);
  };
  return listen(page, tls, tls ? 'localhost' : '127.0.0.1');
}

/**
 * A reverse proxy ending TLS in front of tekil at `upstream`, as a deployment's load balancer does: it
 * passes the request on over plain http with `X-Forwarded-Proto: https` and `X-Forwarded-For`, keeps
 * the Host header, and streams both ways (the portal's event stream goes through it). `extra` answers
 * the paths it claims before they reach tekil.
 */
export async function startTlsProxy(
  upstream: string,
  tls: TestCertificate,
  extra?: (req: IncomingMessage, res: ServerResponse) => boolean,
): Promise<Listening> {
  const target = new URL(upstream);
  const agent = new HttpAgent({ keepAlive: true });
  const proxied = await listen((req, res) => {
    if (extra?.(req, res)) return;
    const out = httpRequest(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-proto': 'https', 'x-forwarded-for': req.socket.remoteAddress ?? '' },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    // The browser went away mid-answer (a closed event stream): let tekil's side go too.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  }, tls);
  return {
    origin: proxied.origin,
    close: async () => {
      await proxied.close();
      agent.destroy();
    },
  };
}
