/**
 * Parses Retry-After, the one parser for sending and forwarding: delay-seconds, or an HTTP date (all
 * three RFC 9110 forms start with a day name, which keeps Date.parse from reading `-5` as a year).
 * Milliseconds from `now`; undefined when the value is neither. Callers bound the result with their
 * own setting (`sending.retry_after_max`, `worker.retry_after_max`): a receiver may ask for a year.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
