// @ts-check
// The Overview page: per-minute inbound counts from the store, the receiver's counts and
// acknowledgement latency, the review queue, and outbound success rate and latency per endpoint.
// Live: every delivery event on the stream asks for a refresh (at most one every REFRESH_MS), and a
// slow timer refreshes the rest (outbound attempts send no events).

import { barChart, lineChart } from './chart.js';
import { $, api, el, find, wordsOf } from './lib.js';

/**
 * GET /stats/inbox and GET /stats/outbox, as far as this page reads them.
 * @typedef {{ minute: string, accepted: number, duplicate: number, rejected: number }} ReceiverMinute
 * @typedef {{ minutes: ReceiverMinute[], ack_p50_ms: number | null, ack_p99_ms: number | null }} ReceiverStats
 * @typedef {{ minute: string, received: number, done: number, stale: number, dead: number }} InboxMinute
 * @typedef {{ review_queue: number, receiver: ReceiverStats | null, minutes: InboxMinute[] }} InboxStats
 * @typedef {{ failed_deliveries: number, endpoints: import('./outbound.js').EndpointHealth[] }} OutboxStats
 */

const words = wordsOf('overview');
const { t, word } = words;
const REFRESH_MS = 2_000;
const IDLE_REFRESH_MS = 15_000;
const receiverKinds = /** @type {const} */ (['accepted', 'duplicate', 'rejected']);
const inboxKinds = /** @type {const} */ (['received', 'done', 'stale', 'dead']);

/** @type {EventSource | null} */
let events = null;
/** @type {ReturnType<typeof setInterval> | undefined} */
let timer;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let pending;
let running = false;

/** @param {HTMLElement} section */
function build(section) {
  /** @param {'reviewQueue' | 'ackP50' | 'ackP99' | 'failedOutbound'} key @param {string} id */
  const tile = (key, id) => el('div', { className: 'tile' }, word('span', key), el('strong', { id }, '–'));
  section.replaceChildren(
    el(
      'div',
      { id: 'overview' },
      el('h1', {}, word('span', 'overview'), ' ', el('span', { id: 'overview-live', dataset: { i18nTitle: 'live' }, title: t('live') }, '●')),
      // Shown when /readyz says the store runs with autovacuum off (docs/operations.md).
      word('p', 'autovacuumOff', { id: 'store-warning', className: 'banner', hidden: true }),
      el(
        'div',
        { className: 'tiles' },
        tile('reviewQueue', 'tile-review-queue'),
        tile('ackP50', 'tile-ack-p50'),
        tile('ackP99', 'tile-ack-p99'),
        tile('failedOutbound', 'tile-failed-outbound'),
      ),
      word('h2', 'receivedPerMinute'),
      el('div', { id: 'chart-receiver', className: 'chart' }),
      word('h2', 'settledPerMinute'),
      el('div', { id: 'chart-inbox', className: 'chart' }),
      word('h2', 'outboundPerEndpoint'),
      el('div', { id: 'chart-outbound', className: 'chart' }),
      word('p', 'processLocal', { className: 'note' }),
    ),
  );
}

/**
 * Accepted, duplicate and rejected per minute: this process's receiver only (kept in its memory).
 * @param {ReceiverStats | null} receiver
 */
function renderReceiver(receiver) {
  const container = $('chart-receiver');
  if (!receiver) {
    container.dataset.total = '0';
    container.replaceChildren(el('p', { className: 'note' }, t('notReceiving')));
    return;
  }
  lineChart(container, {
    times: receiver.minutes.map((m) => new Date(m.minute)),
    series: receiverKinds.map((k) => ({ key: k, label: t(k), values: receiver.minutes.map((m) => m[k]) })),
  });
}

/** @param {HTMLElement} root */
async function refresh(root) {
  if (running) return;
  running = true;
  try {
    /** @type {[InboxStats, OutboxStats]} */
    const [inbox, outbox] = await Promise.all([api('GET', '/stats/inbox?window=1h'), api('GET', '/stats/outbox?window=1h')]);
    $('tile-review-queue').textContent = String(inbox.review_queue);
    $('tile-ack-p50').textContent = inbox.receiver?.ack_p50_ms == null ? '–' : String(inbox.receiver.ack_p50_ms);
    $('tile-ack-p99').textContent = inbox.receiver?.ack_p99_ms == null ? '–' : String(inbox.receiver.ack_p99_ms);
    $('tile-failed-outbound').textContent = String(outbox.failed_deliveries);
    renderReceiver(inbox.receiver);
    lineChart($('chart-inbox'), {
      times: inbox.minutes.map((m) => new Date(m.minute)),
      series: inboxKinds.map((k) => ({ key: k, label: t(k === 'done' ? 'processed' : k), values: inbox.minutes.map((m) => m[k]) })),
    });
    barChart($('chart-outbound'), {
      empty: t('noAttempts'),
      rows: outbox.endpoints.map((e) => ({
        key: e.endpoint_id,
        label: e.endpoint_id,
        value: e.success_rate,
        className: e.failing_since ? 'failing' : 'healthy',
        text: `${e.success_rate == null ? '–' : `${Math.round(e.success_rate * 100)}%`} · ${e.attempts} · p50 ${Math.round(e.p50_ms ?? 0)} / p99 ${Math.round(e.p99_ms ?? 0)} ms`,
      })),
    });
    root.dataset.refreshedAt = new Date().toISOString();
  } catch (err) {
    root.dataset.error = err instanceof Error ? err.message : String(err);
  } finally {
    running = false;
  }
}

function close() {
  events?.close();
  events = null;
  clearInterval(timer);
  clearTimeout(pending);
  pending = undefined;
  find('overview-live')?.classList.remove('on');
}

/** The readiness probe's details: a banner when the store runs with autovacuum off. */
async function storeWarning() {
  try {
    const res = await fetch('/readyz');
    const body = /** @type {{ details?: { autovacuum?: string } }} */ (await res.json());
    const banner = document.getElementById('store-warning');
    if (banner) banner.hidden = body.details?.autovacuum !== 'off';
  } catch {
    // No answer: the page's own requests show the store's trouble.
  }
}

/** @type {import('./lib.js').Page} */
export const overviewPage = {
  id: 'overview',
  nav: 'overview',
  words: 'overview',
  async show(section) {
    close();
    build(section);
    const live = $('overview-live');
    events = new EventSource('/api/v1/events');
    events.onopen = () => live.classList.add('on');
    events.onerror = () => live.classList.remove('on');
    // Many events in a burst make one refresh.
    events.addEventListener('delivery', () => {
      pending ??= setTimeout(() => {
        pending = undefined;
        refresh(section);
      }, REFRESH_MS);
    });
    timer = setInterval(() => refresh(section), IDLE_REFRESH_MS);
    void storeWarning();
    await refresh(section);
  },
  leave: close,
};
