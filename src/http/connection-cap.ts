import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIPv6, type Socket } from 'node:net';

export interface ConnectionCapOptions {
  /** Open connections at most (`server.max_connections`). */
  max: number;
  /** Open connections at most from one client address, an IPv6 /64 counting as one (`server.max_connections_per_address`). */
  maxPerAddress: number;
  /** Seconds sent in Retry-After with a refusal. */
  retryAfterSec: number;
}

/** One open connection: where from, how many of its requests are being answered, since when it is idle. */
interface Connection {
  address: string;
  active: number;
  idleSince: number;
  /** Bytes read from it when it last fell idle: more since means a request is arriving. */
  readWhenIdle: number;
  /** The request being answered, if any (its body may still be arriving). */
  current: IncomingMessage | undefined;
}

/**
 * A request must have been arriving this long before it may be taken for the slowest and closed: a
 * webhook's headers and body come in a packet or two, a request this old and still incomplete is a
 * slow client's.
 */
const SLOW_AFTER_MS = 1_000;

/**
 * Idle: no request being answered, and nothing read since the last answer (a request whose headers
 * are still arriving has no request event yet, but has sent bytes).
 */
function isIdle(socket: Socket, conn: Connection): boolean {
  return conn.active === 0 && socket.bytesRead === conn.readWhenIdle;
}

/**
 * Caps the connections a server holds open, in all and per client address. When a new connection
 * would pass a cap, the connection of that scope idle the longest (a keep-alive connection between
 * requests, or one that has sent nothing yet) is closed to make room: idle connections cost a file
 * descriptor each and do nothing, and a few hundred clients each sending one request a minute would
 * otherwise hold every slot, locking out webhooks and the admin API alike. With none idle, a full
 * server closes its slowest incomplete request (one byte of headers every few seconds is a slow
 * client's, not a provider's) rather than refuse the newcomer. Only when nothing can go is the new
 * one refused: answered `503` with `Retry-After` (OVERLOADED) before any HTTP parsing, and closed, so
 * a provider sees a clear, retryable refusal. An address over its own cap is refused rather than
 * made room for by closing someone else's. Slow clients are also cut by the server's request and
 * headers timeouts, and the small cap per address (a tenth by default) keeps a few addresses from
 * taking every slot.
 *
 * Works by taking over the server's `connection` listeners (the HTTP parser is attached there) and
 * calling them only for connections it admits.
 */
export function capConnections(server: Server, { max, maxPerAddress, retryAfterSec }: ConnectionCapOptions): void {
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  // In the order they were opened.
  const open = new Map<Socket, Connection>();
  const perAddress = new Map<string, number>();

  const forget = (socket: Socket): void => {
    const conn = open.get(socket);
    if (!conn) return;
    open.delete(socket);
    const n = (perAddress.get(conn.address) ?? 1) - 1;
    if (n > 0) perAddress.set(conn.address, n);
    else perAddress.delete(conn.address);
  };

  /** Closes the connection idle the longest among those `inScope`; false when all of them are busy. */
  const closeIdlest = (inScope: (conn: Connection) => boolean): boolean => {
    let idlest: [Socket, Connection] | undefined;
    for (const entry of open) {
      const conn = entry[1];
      if (isIdle(entry[0], conn) && inScope(conn) && (idlest === undefined || conn.idleSince < idlest[1].idleSince)) idlest = entry;
    }
    if (!idlest) return false;
    forget(idlest[0]);
    idlest[0].destroy();
    return true;
  };

  /**
   * Closes the incomplete request that has been arriving the slowest (bytes a second since its
   * connection fell idle, its headers or its body still coming, for at least SLOW_AFTER_MS), answered
   * 503 with Retry-After; false when there is none. A request whose body is in (being handled, waiting
   * for its commit, an event stream) is never one.
   */
  const closeSlowest = (): boolean => {
    const now = performance.now();
    let slowest: [Socket, Connection, number] | undefined;
    for (const [socket, conn] of open) {
      const age = now - conn.idleSince;
      if (age < SLOW_AFTER_MS || isIdle(socket, conn)) continue;
      if (conn.active > 0 && (conn.current === undefined || conn.current.complete)) continue;
      const rate = (socket.bytesRead - conn.readWhenIdle) / age;
      if (slowest === undefined || rate < slowest[2]) slowest = [socket, conn, rate];
    }
    if (!slowest) return false;
    const [socket] = slowest;
    forget(socket);
    socket.on('error', () => {});
    socket.end(refusalResponse(retryAfterSec, 'the request arrived too slowly while the server held its maximum of connections; retry shortly'), () =>
      socket.destroy(),
    );
    return true;
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const conn = open.get(req.socket);
    if (!conn) return;
    conn.active++;
    conn.current = req;
    res.once('close', () => {
      conn.active--;
      conn.current = undefined;
      conn.idleSince = performance.now();
      conn.readWhenIdle = req.socket.bytesRead;
    });
  });

  server.on('connection', (socket: Socket) => {
    const address = addressKey(socket.remoteAddress ?? '');
    if ((perAddress.get(address) ?? 0) >= maxPerAddress && !closeIdlest((conn) => conn.address === address)) {
      refuse(
        socket,
        refusalResponse(
          retryAfterSec,
          `the server holds its maximum of ${maxPerAddress} connections from one address (server.max_connections_per_address); retry shortly`,
        ),
      );
      return;
    }
    if (open.size >= max && !closeIdlest(() => true) && !closeSlowest()) {
      refuse(socket, refusalResponse(retryAfterSec, `the server holds its maximum of ${max} connections (server.max_connections); retry shortly`));
      return;
    }
    open.set(socket, { address, active: 0, idleSince: performance.now(), readWhenIdle: 0, current: undefined });
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    socket.once('close', () => forget(socket));
    for (const listener of listeners) listener.call(server, socket);
  });
}

/**
 * The address a client is counted under: its IPv4 address, or the /64 of its IPv6 address (one host
 * commonly has a whole /64 to pick addresses from).
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

function refusalResponse(retryAfterSec: number, message: string): string {
  const body = JSON.stringify({ error: 'OVERLOADED', message });
  return (
    'HTTP/1.1 503 Service Unavailable\r\n' +
    `Retry-After: ${retryAfterSec}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * Answers and half-closes. The request the client sends is read and dropped: closing a socket with
 * unread data makes the kernel send a reset, and the client could lose the answer.
 */
function refuse(socket: Socket, response: string): void {
  socket.on('error', () => {});
  socket.on('data', () => {});
  socket.setTimeout(5_000, () => socket.destroy());
  socket.end(response);
}
