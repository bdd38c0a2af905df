// @ts-check
// An outbound message's delivery to the open endpoint: every attempt, the payload, and a replay. A ping
// or a replay is watched until its first attempt lands.

import { $, api, canOperate, cell, el, formatTime, statusText, wordsOf } from './lib.js';

/**
 * A message's delivery to one endpoint, with every attempt (GET /messages/{id}).
 * @typedef {{ attempt: number, started_at: string, status_code: number | null, duration_ms: number, error: string | null, response_body: string | null, succeeded: boolean }} SendAttempt
 * @typedef {{ endpoint_id: string, event_id: string, status: string, attempt_history: SendAttempt[] }} MessageDelivery
 * @typedef {{ id: string, event_type: string, payload: unknown, payload_trimmed_at: string | null, payload_erased_at?: string | null, deliveries: MessageDelivery[] }} Message
 */

const { t } = wordsOf('outbound');
const enc = encodeURIComponent;

/** How long a ping's or replay's first attempt is watched for, polling every second. */
const WATCH_MS = 30_000;

/**
 * The message detail of the Outbound page, which says which endpoint is open, starts and checks watch
 * runs (a newer one, or leaving, stops an older), runs a button's action and reloads the history.
 * @param {{
 *   endpointId: () => string | undefined,
 *   watch: () => number,
 *   watched: (run: number) => boolean,
 *   act: (action: () => Promise<void>) => Promise<void>,
 *   loadHistory: () => Promise<void>,
 * }} page
 * @returns {(messageId: string, watch: boolean) => Promise<void>} opens a message, watching it or not
 */
export function messageDetail(page) {
  /**
   * Shows one message's delivery to this endpoint with every attempt; `watch` polls until one lands.
   * @param {string} messageId
   * @param {boolean} watch
   */
  async function openMessage(messageId, watch) {
    const endpointId = page.endpointId();
    const run = page.watch();
    const deadline = Date.now() + WATCH_MS;
    for (;;) {
      /** @type {Message} */
      const m = await api('GET', `/messages/${enc(messageId)}`);
      if (!page.watched(run)) return;
      const delivery = m.deliveries.find((d) => d.endpoint_id === endpointId) ?? m.deliveries[0];
      renderMessage(m, delivery);
      const settled = delivery && delivery.attempt_history.length > 0 && !['pending', 'sending'].includes(delivery.status);
      if (!watch || settled || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    await page.loadHistory();
  }

  /**
   * @param {Message} m
   * @param {MessageDelivery | undefined} delivery
   */
  function renderMessage(m, delivery) {
    const detail = $('message-detail');
    detail.hidden = false;
    detail.dataset.message = m.id;
    $('message-title').textContent = `${m.event_type} · ${m.id}`;
    // The event id this endpoint saw: the message's, or the delivery's own (endpoint option event_id: delivery).
    $('message-status').textContent = delivery ? `${t('status')}: ${statusText(delivery.status)} · ${t('eventId')}: ${delivery.event_id}` : '';
    $('message-status').dataset.status = delivery?.status ?? '';
    $('message-attempts').replaceChildren(
      ...(delivery?.attempt_history ?? []).map((a) =>
        el(
          'tr',
          { dataset: { attempt: String(a.attempt) } },
          cell(String(a.attempt)),
          cell(formatTime(a.started_at)),
          cell(a.status_code == null ? '' : String(a.status_code), a.succeeded ? 'status-done' : 'status-dead'),
          cell(String(a.duration_ms)),
          cell(a.error),
          cell(a.response_body?.slice(0, 200), 'excerpt'),
        ),
      ),
    );
    // A payload trimmed by retention is gone: nothing to show, nothing to replay (the API answers BODY_TRIMMED).
    if (m.payload_erased_at) $('message-payload').textContent = t('payloadErased')(formatTime(m.payload_erased_at));
    else if (m.payload_trimmed_at) $('message-payload').textContent = t('payloadTrimmed')(formatTime(m.payload_trimmed_at));
    else $('message-payload').textContent = typeof m.payload === 'string' ? m.payload : JSON.stringify(m.payload, null, 2);
    $('message-replay').hidden = !canOperate() || Boolean(m.payload_trimmed_at);
    $('message-replay').onclick = () =>
      page.act(async () => {
        const endpointId = page.endpointId();
        const r = await api('POST', `/messages/${enc(m.id)}/replay`, endpointId ? { endpoint_id: endpointId } : {});
        $('endpoint-message').textContent = t('messageReplayed')(r.replayed);
        await openMessage(m.id, true);
      });
  }

  return openMessage;
}
