import { pino, type Logger, type LoggerOptions } from 'pino';

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

/** The level comes from the caller (the process's settings, `TEKIL_LOG_LEVEL`); `info` when none is given. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino({
    level: 'info',
    redact: { paths: redactPaths, censor: '[redacted]' },
    ...options,
  });
}

export type { Logger };
