const MAX_LENGTH = 500;

/**
 * The error summary kept in `last_error` and `inbox_attempts.error`: name and message only (no stack),
 * one line, bounded, with the source's secrets and the delivery's body cut out in case a message
 * quoted them.
 */
export function sanitizeError(err: unknown, redact: { secrets: readonly string[]; body?: string }): string {
  const e = err as { name?: unknown; message?: unknown; code?: unknown };
  const name = typeof e?.name === 'string' ? e.name : 'Error';
  const code = typeof e?.code === 'string' ? ` [${e.code}]` : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  let text = `${name}${code}: ${message}`.replace(/\s+/g, ' ').trim();
  for (const secret of redact.secrets) {
    if (secret.length >= 4) text = text.split(secret).join('[redacted]');
  }
  if (redact.body && redact.body.length >= 8) text = text.split(redact.body).join('[body]');
  return text.length > MAX_LENGTH ? `${text.slice(0, MAX_LENGTH - 1)}…` : text;
}
