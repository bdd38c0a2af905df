import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * Logs never carry secrets, signature headers or bodies: request logging is limited to method,
 * URL and status, and these paths are redacted wherever they appear anyway.
 */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers["webhook-signature"]',
  'req.headers["svix-signature"]',
  'req.headers["stripe-signature"]',
  'req.headers["x-hub-signature-256"]',
  'req.headers["x-hub-signature"]',
  'req.headers["x-shopify-hmac-sha256"]',
  'req.headers["x-webhook-signature"]',
  'req.headers["x-iyz-signature-v3"]',
  'secret',
  'secrets',
  '*.secret',
  '*.secrets',
  'named_secrets',
  '*.named_secrets',
  '*.merchant_key',
  '*.merchant_salt',
  '*.secret_key',
  'body',
  '*.body',
  // Node's HTTP parser errors carry the request's raw bytes (headers with tokens and signatures, the
  // body); Fastify logs them at trace level as the client-error line's `err`.
  'err.rawPacket',
  '*.rawPacket',
];

/**
 * The level comes from the caller (the process's settings, `TEKIL_LOG_LEVEL`); `info` when none is given.
 * JSON lines to stdout unless another destination is given (the CLI's terminal logger, below).
 */
export function createLogger(options: LoggerOptions = {}, destination?: DestinationStream): Logger {
  const merged: LoggerOptions = { level: 'info', redact: { paths: redactPaths, censor: '[redacted]' }, ...options };
  return destination ? pino(merged, destination) : pino(merged);
}

/**
 * The logger of a `tekil start` process: readable lines when stdout is a terminal (someone is watching),
 * JSON lines otherwise (a file, a pipe, a log collector). pino-pretty is loaded only for the former.
 * Redaction happens before formatting, so a pretty line hides the same fields a JSON line does.
 */
export async function createTerminalAwareLogger(
  options: LoggerOptions = {},
  terminal: { isTerminal: boolean; stream?: NodeJS.WritableStream } = { isTerminal: process.stdout.isTTY === true },
): Promise<Logger> {
  if (!terminal.isTerminal) return createLogger(options, terminal.stream as DestinationStream | undefined);
  const { default: pretty } = await import('pino-pretty');
  return createLogger(
    options,
    pretty({ colorize: terminal.stream === undefined, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true, destination: terminal.stream ?? 1 }),
  );
}

export type { Logger };
