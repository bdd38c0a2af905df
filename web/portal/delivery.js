// @ts-check
// One delivery: its fields, every attempt (HTTP code, duration, error, an excerpt of the answer), the
// payload as sent, "Resend", and "resend the failed ones" of its endpoint in a time window (around
// this one by default). Another tenant's delivery is not found (404): the session sees only its own
// tenant.

import { api, canOperate, cell, el, formatTime, language, messageOf, nextTry, statusText, t, word } from './lib.js';
import { parseInput, timeInputProps } from '../dates.js';

/**
 * @typedef {{ attempt: number, started_at: string, duration_ms: number, succeeded: boolean, status_code: number | null, error: string | null, response_body: string | null }} Attempt
 * @typedef {{ id: number, endpoint_id: string, url: string, status: string, attempts: number, next_attempt_at: string | null, last_status_code: number | null,
 *   last_error: string | null, created_at: string, completed_at: string | null, attempt_history: Attempt[] }} Delivery
 * @typedef {{ id: string, event_type: string, resource_id: string | null, created_at: string, payload: unknown, payload_trimmed_at: string | null, payload_erased_at?: string | null, deliveries: Delivery[] }} Message
 */

/** How much of an answer's body a row shows (the stored excerpt may be longer). */
const EXCERPT = 200;

/**
 * Sends again the failed deliveries of this delivery's endpoint made in a window: by default from an
 * hour before this one until now.
 * @param {Delivery} d
 * @param {HTMLElement} message
 */
function windowForm(d, message) {
  const since = el('input', { id: 'window-since', required: true, ...timeInputProps(new Date(Date.parse(d.created_at) - 3_600_000), language()) });
  const until = el('input', { id: 'window-until', required: true, ...timeInputProps(new Date(Date.now() + 60_000), language()) });
  return el(
    'form',
    {
      id: 'resend-window',
      className: 'filters',
      on: {
        submit: async (e) => {
          e.preventDefault();
          try {
            const body = { endpoint_id: d.endpoint_id, since: parseInput(since.value)?.toISOString(), until: parseInput(until.value)?.toISOString() };
            const r = await api('POST', '/deliveries/replay-failed', body);
            message.textContent = t('failedResent')(r.replayed);
          } catch (err) {
            message.textContent = messageOf(err);
          }
        },
      },
    },
    el('label', {}, word('span', 'since'), since),
    el('label', {}, word('span', 'until'), until),
    word('button', 'resendFailedOfEndpoint', { type: 'submit' }),
  );
}

/** @param {HTMLElement} section @param {string} messageId @param {string} deliveryId */
async function render(section, messageId, deliveryId) {
  /** @type {Message} */
  const m = await api('GET', `/messages/${encodeURIComponent(messageId)}`);
  const d = m.deliveries.find((x) => String(x.id) === deliveryId) ?? m.deliveries[0];
  if (!d) throw new Error(`${messageId}: ${t('noDeliveries')}`);
  /** @type {[import('./lib.js').WordKey, unknown][]} */
  const fields = [
    ['message', m.id],
    ['type', m.event_type],
    ['resource', m.resource_id],
    ['endpoint', d.endpoint_id],
    ['target', d.url],
    ['status', statusText(d.status)],
    ['attempts', d.attempts],
    ['code', d.last_status_code],
    ['error', d.last_error],
    ['created', formatTime(d.created_at)],
    ['nextAttempt', nextTry(d)],
  ];
  const attempts = el(
    'tbody',
    { id: 'attempts' },
    d.attempt_history.map((a) =>
      el(
        'tr',
        { dataset: { attempt: String(a.attempt) } },
        cell(a.attempt),
        cell(formatTime(a.started_at)),
        cell(a.status_code),
        cell(a.duration_ms),
        cell(a.error, 'wrap'),
        el('td', { className: 'excerpt', title: a.response_body ?? '' }, (a.response_body ?? '').slice(0, EXCERPT)),
      ),
    ),
  );
  if (d.attempt_history.length === 0) attempts.append(el('tr', {}, word('td', 'noAttempts', { colSpan: 6, className: 'empty' })));
  const message = el('p', { id: 'delivery-message', role: 'status' });
  section.replaceChildren(
    el(
      'div',
      { id: 'delivery', dataset: { delivery: String(d.id), message: m.id } },
      word('a', 'back', { id: 'back', className: 'button', href: '#/webhooks' }),
      el(
        'h1',
        { id: 'delivery-title' },
        `${m.event_type} · `,
        el('span', { id: 'delivery-status', dataset: { status: d.status }, className: `status-${d.status}` }, statusText(d.status)),
      ),
      el(
        'dl',
        { id: 'delivery-fields' },
        fields.flatMap(([key, value]) => [word('dt', key), el('dd', { dataset: { field: key } }, value == null ? '' : String(value))]),
      ),
      el(
        'div',
        { className: 'toolbar' },
        canOperate() && !m.payload_trimmed_at
          ? word('button', 'resend', {
              id: 'resend',
              type: 'button',
              className: 'primary',
              on: {
                click: async () => {
                  try {
                    const r = await api('POST', `/messages/${encodeURIComponent(m.id)}/replay`, { endpoint_id: d.endpoint_id });
                    await render(section, messageId, deliveryId);
                    /** @type {HTMLElement} */ (section.querySelector('#delivery-message')).textContent = t('resent')(r.replayed);
                  } catch (err) {
                    message.textContent = messageOf(err);
                  }
                },
              },
            })
          : null,
      ),
      canOperate() ? windowForm(d, message) : null,
      message,
      word('h2', 'attemptList'),
      el(
        'table',
        { id: 'attempts-table' },
        el(
          'thead',
          {},
          el('tr', {}, el('th', {}, '#'), word('th', 'started'), word('th', 'code'), word('th', 'duration'), word('th', 'error'), word('th', 'response')),
        ),
        attempts,
      ),
      word('h2', 'payload'),
      m.payload_erased_at
        ? word('p', 'payloadErased', { className: 'note' })
        : m.payload_trimmed_at
          ? word('p', 'payloadTrimmed', { className: 'note' })
          : el('pre', { id: 'payload' }, JSON.stringify(m.payload, null, 2)),
    ),
  );
}

/** @type {import('./lib.js').Page} */
export const deliveryPage = {
  id: 'delivery',
  async show(section, [messageId = '', deliveryId = '']) {
    await render(section, messageId, deliveryId);
  },
};
