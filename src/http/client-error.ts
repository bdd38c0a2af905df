import http from 'node:http';
import type { Socket } from 'node:net';
import { TekilError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';

/** Node's parser and timeout errors, by their code, as catalogue codes; anything else is malformed. */
const clientErrorCodes: Readonly<Record<string, ErrorCode>> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
};

/**
 * The answer to a request Node's HTTP parser refuses, or one its request and headers timeouts cut,
 * before any route runs: the catalogue's code and status with the usual JSON body, as every other
 * refusal (Fastify's default answers `{"error":"Bad Request"}` and the like). The parser's error is
 * logged at trace level only: it carries the request's raw bytes (redacted by the logger).
 */
export function clientErrorAnswer(log: Logger): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    // A reset connection has nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const code = (err.code !== undefined ? clientErrorCodes[err.code] : undefined) ?? 'REQUEST_MALFORMED';
    const error = new TekilError(code, undefined, { cause: err });
    log.trace({ err, code }, 'client error');
    if (socket.writable) {
      const body = JSON.stringify(error.toJSON());
      socket.write(
        `HTTP/1.1 ${error.statusCode} ${http.STATUS_CODES[error.statusCode] ?? ''}\r\n` +
          'Content-Type: application/json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy(err);
  };
}
