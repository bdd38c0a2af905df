import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { parseDuration } from '../config/units.js';
import { TekilError } from '../errors.js';
import { headerValue } from '../http/header-value.js';
import { addApiOptions, ApiError, callApi, resolveApiTarget, type ApiOptions, type ApiTarget } from './api-client.js';
import { defaultStatePath, LOOKBACK_MS, markForwarded, readState, writeState, type ListenState } from './listen-state.js';

interface ListenOptions extends ApiOptions {
  remote?: string;
  source: string;
  to: string;
  since?: string;
  state?: string;
  interval: string;
}

interface ListedDelivery {
  event_id: string;
  received_at: string;
}

interface DeliveryDetail {
  headers: Record<string, string>;
  content_type: string | null;
  body: string;
  body_encoding: 'utf8' | 'base64';
  body_trimmed_at: string | null;
}

/**
 * Hop-by-hop and framing headers: the local request gets its own. Credentials: whatever the remote
 * says a provider sent, the local app is never handed an `authorization` or a cookie to act on.
 */
const NOT_FORWARDED = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'authorization',
  'proxy-authorization',
  'cookie',
]);
/** A header name HTTP allows (RFC 9110 token), and a value the client will send (no CR, LF, NUL; Latin-1 only). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const PAGE_LIMIT = 500;
/** Pages read in one poll at most: a remote that keeps answering a next page cannot hold listen in one poll for ever. */
const MAX_PAGES = 100;
const LOCAL_TIMEOUT_MS = 30_000;
const MAX_BACKOFF_MS = 10_000;

/**
 * `tekil listen`: follows a running tekil's deliveries of one source and forwards each to a local URL,
 * oldest first, moving its on-disk cursor only after the local URL answered 2xx. It polls the admin
 * API, so nothing on the laptop needs to be reachable.
 */
export function registerListenCommand(program: Command): void {
  addApiOptions(program.command('listen'))
    .description("Forward a remote tekil's deliveries of one source to a local URL; resumes after a restart.")
    .requiredOption('--source <name>', 'the source whose deliveries to forward')
    .requiredOption('--to <url>', 'the local URL to POST each delivery to, e.g. http://localhost:3000/webhooks')
    .option('--remote <url>', 'the remote tekil (same as --url)')
    .option('--since <duration>', 'replay deliveries received in this window first (e.g. 30m, 2h, 1d), ignoring the saved cursor')
    .option('--state <file>', 'the cursor file (default: .tekil/listen-<source>.json)')
    .option('--interval <duration>', 'how often to ask the remote for new deliveries', '1s')
    .action(async (opts: ListenOptions) => {
      const target = resolveApiTarget({ ...opts, url: opts.remote ?? opts.url });
      if (!/^https?:\/\/[^/]/.test(opts.to) || !URL.canParse(opts.to))
        throw new TekilError('VALIDATION_FAILED', `--to: expected an http(s) URL, got "${opts.to}"`);
      const interval = durationOption('--interval', opts.interval);
      const since = opts.since === undefined ? undefined : durationOption('--since', opts.since);
      await listen({ target, source: opts.source, to: opts.to, statePath: opts.state ?? defaultStatePath(opts.source), since, intervalMs: interval });
    });
}

function durationOption(name: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new TekilError('VALIDATION_FAILED', `${name}: expected a duration like 30s, 30m, 2h or 1d, got "${text}"`);
  return ms;
}

interface ListenRun {
  target: ApiTarget;
  source: string;
  to: string;
  statePath: string;
  since: number | undefined;
  intervalMs: number;
}

async function listen(run: ListenRun): Promise<never> {
  const state = await startingState(run);
  writeState(run.statePath, state);
  const wake = followEventStream(run);
  log(`listening to ${run.source} on ${run.target.url}, forwarding to ${run.to} (cursor ${run.statePath})`);
  for (;;) {
    const fresh = (await retrying('list deliveries', () => listSince(run, state.floor))).filter((d) => !state.forwarded.has(d.event_id));
    for (const d of fresh) {
      const accepted = await forwardUntilAccepted(run, d);
      markForwarded(state, d.event_id, d.received_at);
      writeState(run.statePath, state);
      // Said once the cursor holds it: a line on screen is a delivery a restart will not send again.
      if (accepted !== undefined) log(`${d.event_id}: ${accepted}`);
    }
    if (fresh.length === 0) await wake.next(run.intervalMs);
  }
}

/**
 * The remote's live event stream (`GET /api/v1/events`, the panel's) only wakes the loop: a delivery
 * arrived or changed, so list now rather than at the next interval. The list stays the one source of
 * truth, so a dropped stream (reconnected with backoff) or a missed event only costs latency.
 */
function followEventStream(run: ListenRun): { next(timeoutMs: number): Promise<void> } {
  let pending = false;
  let waiter: (() => void) | undefined;
  const signal = () => {
    pending = true;
    waiter?.();
  };
  void (async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await request(`${run.target.url}/api/v1/events`, { headers: { authorization: `Bearer ${run.target.token}` }, bodyTimeout: 0 });
        if (res.statusCode !== 200) {
          await res.body.dump();
        } else {
          attempt = 0;
          log('following the live event stream');
          for await (const chunk of res.body) if ((chunk as Buffer).includes('event: delivery')) signal();
        }
      } catch {
        // Unreachable or cut: polling carries on meanwhile, and the stream is opened again below.
      }
      await sleep(backoff(Math.max(1, attempt)));
    }
  })();
  return {
    async next(timeoutMs) {
      if (!pending) {
        const timer = new AbortController();
        await Promise.race([sleep(timeoutMs, undefined, { signal: timer.signal }).catch(() => {}), new Promise<void>((resolve) => (waiter = resolve))]);
        timer.abort();
        waiter = undefined;
      }
      pending = false;
    },
  };
}

/** `--since` replays a window; else the saved cursor; else "from now": what the remote holds already counts as forwarded. */
async function startingState(run: ListenRun): Promise<ListenState> {
  const base = { version: 1 as const, remote: run.target.url, source: run.source };
  if (run.since !== undefined) return { ...base, floor: new Date(Date.now() - run.since).toISOString(), forwarded: new Map() };
  const saved = readState(run.statePath, run.target.url, run.source);
  if (saved) return saved;
  // The remote's newest delivery, not this machine's clock, says where "now" is (this machine's clock
  // when the remote's time cannot be read).
  const newest = await retrying('list deliveries', () => listPage(run, { limit: '1' }));
  const newestMs = newest.items[0] ? Date.parse(newest.items[0].received_at) : 0;
  const floorMs = Number.isFinite(newestMs) ? Math.max(0, newestMs - (newest.items[0] ? LOOKBACK_MS : 0)) : Date.now() - LOOKBACK_MS;
  const state: ListenState = { ...base, floor: new Date(floorMs).toISOString(), forwarded: new Map() };
  for (const d of await retrying('list deliveries', () => listSince(run, state.floor))) state.forwarded.set(d.event_id, d.received_at);
  return state;
}

interface Page {
  items: ListedDelivery[];
  next_cursor: string | null;
}

/** One page of the remote's list, keeping only the items listen can use (an id and a received_at, as text). */
async function listPage(run: ListenRun, query: Record<string, string>): Promise<Page> {
  const page = await callApi<{ items?: unknown; next_cursor?: unknown }>(
    run.target,
    'GET',
    `/api/v1/inbox?${new URLSearchParams({ source: run.source, ...query })}`,
  );
  const items = (Array.isArray(page.items) ? page.items : []).filter(
    (d): d is ListedDelivery => typeof d === 'object' && d !== null && typeof d.event_id === 'string' && typeof d.received_at === 'string',
  );
  return { items, next_cursor: typeof page.next_cursor === 'string' && page.next_cursor !== '' ? page.next_cursor : null };
}

/**
 * Every delivery received at or after `floor`, oldest first (the list pages newest first), each once.
 * At most MAX_PAGES pages, and never the same cursor twice: past that, the newest ones read are forwarded
 * and the rest is said on screen.
 */
async function listSince(run: ListenRun, floor: string): Promise<ListedDelivery[]> {
  const all = new Map<string, ListedDelivery>();
  const seen = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; ; pages++) {
    if (pages === MAX_PAGES || (cursor !== null && seen.has(cursor))) {
      log(
        `the remote lists more than ${MAX_PAGES} pages (or repeats a page) since ${floor}: forwarding the ${all.size} newest; use a shorter --since for the rest`,
      );
      break;
    }
    if (cursor !== null) seen.add(cursor);
    const page: Page = await listPage(run, { since: floor, limit: String(PAGE_LIMIT), ...(cursor ? { cursor } : {}) });
    for (const d of page.items) if (!all.has(d.event_id)) all.set(d.event_id, d);
    cursor = page.next_cursor;
    if (cursor === null) break;
  }
  return [...all.values()].reverse();
}

/**
 * Fetches the delivery's stored headers and raw body and POSTs them to the local URL until it answers
 * 2xx; answers the status and time of the accepted request, or undefined when there was nothing to send.
 */
async function forwardUntilAccepted(run: ListenRun, d: ListedDelivery): Promise<string | undefined> {
  const path = `/api/v1/inbox/${encodeURIComponent(run.source)}/${encodeURIComponent(d.event_id)}`;
  let detail: DeliveryDetail;
  try {
    detail = await retrying(`show ${d.event_id}`, () => callApi<DeliveryDetail>(run.target, 'GET', path));
  } catch (err) {
    // Listed a moment ago, deleted since (retention's record sweep): there is nothing left to forward.
    if (err instanceof ApiError && err.status === 404) {
      log(`${d.event_id}: skipped, the delivery no longer exists on the remote`);
      return undefined;
    }
    throw err;
  }
  if (detail.body_trimmed_at !== null) {
    log(`${d.event_id}: skipped, retention trimmed its body at ${detail.body_trimmed_at}`);
    return undefined;
  }
  const body = Buffer.from(String(detail.body ?? ''), detail.body_encoding === 'base64' ? 'base64' : 'utf8');
  const headers: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(detail.headers ?? {})) {
    if (NOT_FORWARDED.has(name.toLowerCase())) continue;
    // A header the HTTP client would refuse (a stored value with a line break, a name that is no token)
    // is left out, and said: one odd header must not hold every later delivery back.
    if (typeof value === 'string' && HEADER_NAME.test(name) && HEADER_VALUE.test(value)) headers[name] = value;
    else dropped.push(name);
  }
  if (typeof detail.content_type === 'string' && headers['content-type'] === undefined && HEADER_VALUE.test(detail.content_type)) {
    headers['content-type'] = detail.content_type;
  }
  if (dropped.length > 0) log(`${d.event_id}: left out headers the HTTP client refuses: ${dropped.map((n) => JSON.stringify(n)).join(', ')}`);
  // As forwarding sends them: an id or source outside plain ASCII in the RFC 8187 form (docs/processing.md).
  headers['x-tekil-source'] = headerValue(run.source);
  headers['x-tekil-event-id'] = headerValue(d.event_id);
  for (let attempt = 1; ; attempt++) {
    const started = Date.now();
    let outcome: string;
    try {
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(run.to, { method: 'POST', headers, body, headersTimeout: LOCAL_TIMEOUT_MS, bodyTimeout: LOCAL_TIMEOUT_MS });
      } catch (err) {
        // A request that cannot be built fails the same way every time: skipped, not retried for ever.
        if ((err as { code?: unknown }).code === 'UND_ERR_INVALID_ARG') {
          log(`${d.event_id}: skipped, its request cannot be built: ${(err as Error).message}`);
          return undefined;
        }
        throw err;
      }
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        return `${res.statusCode} (${Date.now() - started} ms)`;
      }
      outcome = `HTTP ${res.statusCode}`;
    } catch (err) {
      outcome = (err as Error).message;
    }
    const wait = backoff(attempt);
    log(`${d.event_id}: ${outcome}; trying again in ${wait} ms`);
    await sleep(wait);
  }
}

/**
 * Calls the remote until it answers: an unreachable or failing remote is waited out (a laptop sleeps,
 * a deploy restarts tekil). A refusal that waiting cannot fix (bad token, no such source) ends the run.
 */
async function retrying<T>(what: string, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429) throw err;
      const wait = backoff(attempt);
      log(`${what}: ${(err as Error).message}; trying again in ${wait} ms`);
      await sleep(wait);
    }
  }
}

function backoff(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 250 * 2 ** (attempt - 1));
}

function log(line: string): void {
  process.stdout.write(`${new Date().toISOString()} ${line}\n`);
}
