/**
 * What of a request's input the audit keeps: its shape and ids, never a secret. A field whose name says
 * it holds a credential is replaced by `[withheld]` wherever it nests, and so is the payload of a
 * published message (application data, not the operator's action); a URL loses its user:password part.
 * The list is of names, not of routes, so a route added later is covered without being listed here.
 */
const WITHHELD = /secret|token|password|passphrase|authorization|cookie|credential|private|api_?key|^data$|^payload$/i;
const MAX_TEXT = 256;
const MAX_ITEMS = 50;
const MAX_DEPTH = 4;

export const WITHHELD_MARK = '[withheld]';

export function summarize(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (typeof value === 'string') return withoutUserinfo(value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value);
  if (typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '…';
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((v) => summarize(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>).slice(0, MAX_ITEMS)) {
    out[key] = WITHHELD.test(key) ? WITHHELD_MARK : summarize(v, depth + 1);
  }
  return out;
}

/** `https://user:pass@host/…` → `https://host/…`: a destination may carry its credentials in the URL. */
function withoutUserinfo(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/i, '$1');
}
