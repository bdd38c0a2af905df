// The Overview page: per-minute inbound counts from the store, the receiver's counts and
// acknowledgement latency, the review queue, and outbound success rate and latency per endpoint.
// Live: every delivery event on the stream asks for a refresh (at most one every REFRESH_MS), and a
// slow timer refreshes the rest (outbound attempts send no events).

import { barChart, lineChart } from './chart.js';

const $ = (id) => document.getElementById(id);
const REFRESH_MS = 2_000;
const IDLE_REFRESH_MS = 15_000;
const receiverKinds = ['accepted', 'duplicate', 'rejected'];

export function mountOverview(root, { api, t }) {
  let events = null;
  let timer = null;
  let pending = null;
  let running = false;

  /** Accepted, duplicate and rejected per minute: this process's receiver only (kept in its memory). */
  function renderReceiver(receiver) {
    const container = $('chart-receiver');
    if (!receiver) {
      container.dataset.total = '0';
      container.replaceChildren(Object.assign(document.createElement('p'), { className: 'note', textContent: t('notReceiving') }));
      return;
    }
    lineChart(container, {
      times: receiver.minutes.map((m) => new Date(m.minute)),
      series: receiverKinds.map((k) => ({ key: k, label: t(k), values: receiver.minutes.map((m) => m[k]) })),
    });
  }

  async function refresh() {
    if (running) return;
    running = true;
    try {
      const [inbox, outbox] = await Promise.all([api('GET', '/stats/inbox?window=1h'), api('GET', '/stats/outbox?window=1h')]);
      $('tile-review-queue').textContent = String(inbox.review_queue);
      $('tile-ack-p50').textContent = inbox.receiver?.ack_p50_ms == null ? '–' : String(inbox.receiver.ack_p50_ms);
      $('tile-ack-p99').textContent = inbox.receiver?.ack_p99_ms == null ? '–' : String(inbox.receiver.ack_p99_ms);
      $('tile-failed-outbound').textContent = String(outbox.failed_deliveries);
      renderReceiver(inbox.receiver);
      lineChart($('chart-inbox'), {
        times: inbox.minutes.map((m) => new Date(m.minute)),
        series: ['received', 'done', 'stale', 'dead'].map((k) => ({ key: k, label: t(k === 'done' ? 'processed' : k), values: inbox.minutes.map((m) => m[k]) })),
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
      root.dataset.error = err.message;
    } finally {
      running = false;
    }
  }

  /** Many events in a burst make one refresh. */
  function soon() {
    if (!pending) pending = setTimeout(() => { pending = null; refresh(); }, REFRESH_MS);
  }

  function open() {
    close();
    events = new EventSource('/api/v1/events');
    events.onopen = () => $('overview-live').classList.add('on');
    events.onerror = () => $('overview-live').classList.remove('on');
    events.addEventListener('delivery', soon);
    timer = setInterval(refresh, IDLE_REFRESH_MS);
    return refresh();
  }

  function close() {
    events?.close();
    events = null;
    clearInterval(timer);
    clearTimeout(pending);
    pending = null;
    $('overview-live').classList.remove('on');
  }

  return { open, close };
}
