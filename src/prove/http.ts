import { request } from 'undici';
import { z } from 'zod';
import { TekilError } from '../errors.js';

/** One answer to a sent request: the status, or why there was none (timeout, refused connection). */
export interface Answer {
  status?: number;
  error?: string;
  /** A 2xx whose body is not the one the provider waits for (PayTR's `OK`): the provider resends. */
  unexpectedBody?: { got: string; expected: string };
  ms: number;
}

export const isSuccess = (a: Answer): boolean => a.status !== undefined && a.status >= 200 && a.status < 300 && a.unexpectedBody === undefined;
export const describeAnswer = (a: Answer): string => {
  if (a.status === undefined) return a.error ?? 'no answer';
  if (a.unexpectedBody === undefined) return `HTTP ${a.status}`;
  const got = a.unexpectedBody.got.length > 40 ? `${a.unexpectedBody.got.slice(0, 40)}…` : a.unexpectedBody.got;
  return `HTTP ${a.status} with body ${JSON.stringify(got)}, not the ${JSON.stringify(a.unexpectedBody.expected)} the provider waits for`;
};

/**
 * POSTs as a provider does: gives up after `timeoutMs` (a provider's timeout; the receiver may still be
 * working) and reads the whole answer, so the connection can be reused. With `expectedBody`, a 2xx
 * counts only when its body is exactly that (PayTR resends until it reads `OK`).
 */
export async function postOnce(url: string, body: Buffer, headers: Record<string, string>, timeoutMs: number, expectedBody?: string): Promise<Answer> {
  const started = Date.now();
  try {
    const res = await request(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(timeoutMs) });
    if (expectedBody === undefined || res.statusCode < 200 || res.statusCode >= 300) {
      await res.body.dump();
      return { status: res.statusCode, ms: Date.now() - started };
    }
    const got = await res.body.text();
    return { status: res.statusCode, ...(got === expectedBody ? {} : { unexpectedBody: { got, expected: expectedBody } }), ms: Date.now() - started };
  } catch (err) {
    const ms = Date.now() - started;
    const name = err instanceof Error ? err.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') return { error: `no answer within ${timeoutMs} ms`, ms };
    const code = (err as { code?: unknown }).code;
    return { error: typeof code === 'string' ? code : err instanceof Error ? err.message : String(err), ms };
  }
}

/** One resource as the receiver reports it: how many times its side effect ran, and its state. */
export interface Effect {
  count: number;
  state?: string;
}

const effectEntry = z.union([
  z
    .number()
    .int()
    .nonnegative()
    .transform((count): Effect => ({ count })),
  // `state: null` is what SQL behind the route gives an invoice with no state yet: unknown, as if absent.
  z.object({ count: z.number().int().nonnegative(), state: z.string().nullable().optional() }).passthrough(),
]);
const effectsDocument = z.record(z.string(), effectEntry);

/**
 * Reads the effects contract: `GET <effects URL>` → `{ "<resource id>": { "count": n, "state": "…" } }`
 * (a bare number is the count). With `ids`, asks for those resources only (`?ids=a,b`); a receiver
 * may ignore that and answer with everything. Anything else stops the run: a check that cannot
 * observe the receiver must never be reported as passed.
 */
export async function readEffects(effectsUrl: string, timeoutMs: number, ids?: readonly string[]): Promise<Map<string, Effect>> {
  const target = new URL(effectsUrl);
  if (ids?.length) target.searchParams.set('ids', ids.join(','));
  let status: number;
  let text: string;
  try {
    const res = await request(target, { method: 'GET', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    throw new TekilError(
      'PROVE_EFFECTS_UNREACHABLE',
      `cannot read the effects at ${effectsUrl}: ${err instanceof Error ? err.message || err.name : String(err)}`,
      {
        cause: err,
        hint: 'start the receiver, or point --effects at its GET effects route (see docs/prove.md)',
      },
    );
  }
  if (status < 200 || status >= 300) {
    throw new TekilError('PROVE_EFFECTS_UNREACHABLE', `the effects at ${effectsUrl} answered HTTP ${status}`, {
      hint: 'the effects route must answer GET with 200 and a JSON object (see docs/prove.md)',
    });
  }
  return parseEffects(text, effectsUrl);
}

/** The effects answer's body, checked against the contract; the URL is for the error message. */
export function parseEffects(text: string, effectsUrl: string): Map<string, Effect> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new TekilError('PROVE_EFFECTS_INVALID', `the effects at ${effectsUrl} are not JSON`, {
      cause: err,
      hint: 'answer {"<resource id>": {"count": n, "state": "…"}}',
    });
  }
  const result = effectsDocument.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new TekilError(
      'PROVE_EFFECTS_INVALID',
      `the effects at ${effectsUrl} do not follow the contract${issue ? ` (at ${issue.path.join('.') || 'the top'}: ${issue.message})` : ''}`,
      {
        hint: 'answer {"<resource id>": {"count": n, "state": "…"}} or {"<resource id>": n}',
      },
    );
  }
  return new Map(
    Object.entries(result.data).map(([id, e]) => [id, { count: e.count, ...(e.state === undefined || e.state === null ? {} : { state: e.state }) }]),
  );
}

/** Answers of a receiver that has no such control route: the action is optional, the row is skipped. */
const NOT_IMPLEMENTED = new Set([404, 405, 501]);

/**
 * Calls an optional control action (`POST <control>/kill-next`): true when the receiver took it (2xx),
 * false when it has no such route (404, 405, 501). Any other answer fails as callControl does.
 */
export async function callOptionalControl(controlUrl: string, action: 'kill-next', timeoutMs: number): Promise<{ supported: boolean; status: number }> {
  const url = new URL(`${controlUrl.replace(/\/+$/, '')}/${action}`);
  let status: number;
  try {
    const res = await request(url, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
    status = res.statusCode;
    await res.body.dump();
  } catch (err) {
    throw new TekilError('PROVE_CONTROL_FAILED', `POST ${url.href} failed: ${err instanceof Error ? err.message || err.name : String(err)}`, { cause: err });
  }
  if (NOT_IMPLEMENTED.has(status)) return { supported: false, status };
  if (status < 200 || status >= 300) {
    throw new TekilError('PROVE_CONTROL_FAILED', `POST ${url.href} answered HTTP ${status}`, {
      hint: 'the control routes must answer 2xx, or 404 for an optional one the receiver does not implement (see docs/prove.md)',
    });
  }
  return { supported: true, status };
}

/** Calls the control contract (`POST <control>/fail-next`, `…/slow-next?ms=N`); it must answer 2xx. */
export async function callControl(controlUrl: string, action: 'fail-next' | 'slow-next', timeoutMs: number, ms?: number): Promise<void> {
  const url = new URL(`${controlUrl.replace(/\/+$/, '')}/${action}`);
  if (ms !== undefined) url.searchParams.set('ms', String(ms));
  let status: number;
  try {
    const res = await request(url, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
    status = res.statusCode;
    await res.body.dump();
  } catch (err) {
    throw new TekilError('PROVE_CONTROL_FAILED', `POST ${url.href} failed: ${err instanceof Error ? err.message || err.name : String(err)}`, { cause: err });
  }
  if (status < 200 || status >= 300) {
    throw new TekilError('PROVE_CONTROL_FAILED', `POST ${url.href} answered HTTP ${status}`, {
      hint: 'the control routes must answer 2xx (see docs/prove.md)',
    });
  }
}
