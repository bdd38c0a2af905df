import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Caps the connections a server holds open. Past the cap a new connection is not handed to HTTP at
 * all: it is answered `503` with `Retry-After` (OVERLOADED) and closed, so a provider sees a clear,
 * retryable refusal instead of a hang, and the process keeps file descriptors for its store. Slow
 * clients that fill the cap are cut by the server's request and headers timeouts, which frees it.
 *
 * Works by taking over the server's `connection` listeners (the HTTP parser is attached there) and
 * calling them only for connections within the cap.
 */
export function capConnections(server: Server, max: number, retryAfterSec: number): void {
  const refusal = refusalResponse(retryAfterSec, max);
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  let open = 0;
  server.on('connection', (socket: Socket) => {
    if (open >= max) {
      refuse(socket, refusal);
      return;
    }
    open++;
    socket.once('close', () => open--);
    for (const listener of listeners) listener.call(server, socket);
  });
}

function refusalResponse(retryAfterSec: number, max: number): string {
  const body = JSON.stringify({ error: 'OVERLOADED', message: `the server holds its maximum of ${max} connections (server.max_connections); retry shortly` });
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
