import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A receiver that answers each path after that path's delay, counting requests open at once per path prefix. */
export interface SlowServer {
  url: string;
  /** The answer's delay for paths starting with the prefix (longest prefix wins); 0 answers at once. */
  setDelay(prefix: string, ms: number): void;
  /** Requests open now, and the most open at once, for paths starting with the prefix. */
  open(prefix: string): number;
  mostOpen(prefix: string): number;
  resetMost(prefix: string): void;
  /** When each request for the path arrived (epoch ms). */
  arrivals(path: string): number[];
  close(): Promise<void>;
}

export async function startSlowServer(): Promise<SlowServer> {
  const delays = new Map<string, number>();
  const openNow = new Map<string, number>();
  const most = new Map<string, number>();
  const arrived = new Map<string, number[]>();
  const prefixesOf = (path: string) => [...delays.keys()].filter((p) => path.startsWith(p));
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    const list = arrived.get(path) ?? [];
    list.push(Date.now());
    arrived.set(path, list);
    const prefixes = prefixesOf(path);
    for (const p of prefixes) {
      const n = (openNow.get(p) ?? 0) + 1;
      openNow.set(p, n);
      most.set(p, Math.max(most.get(p) ?? 0, n));
    }
    const delay = prefixes.reduce((best, p) => (best === undefined || p.length > best.length ? p : best), undefined as string | undefined);
    req.resume();
    req.on('end', () => {
      setTimeout(
        () => {
          for (const p of prefixes) openNow.set(p, (openNow.get(p) ?? 1) - 1);
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        },
        delay === undefined ? 0 : (delays.get(delay) ?? 0),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setDelay: (prefix, ms) => {
      delays.set(prefix, ms);
    },
    open: (prefix) => openNow.get(prefix) ?? 0,
    mostOpen: (prefix) => most.get(prefix) ?? 0,
    resetMost: (prefix) => {
      most.set(prefix, openNow.get(prefix) ?? 0);
    },
    arrivals: (path) => arrived.get(path) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
