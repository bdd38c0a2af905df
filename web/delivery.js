// @ts-check
// A delivery's detail: its ids and fields, the kept (non-secret) headers, the body pretty or raw, the
// attempt timeline, and replay / discard for those who may change things.

import { api, canOperate, el, formatTime, pageLink, statusText, wordsOf } from './lib.js';
import { table } from './widgets.js';
import { lastListHash } from './inbound.js';

/**
 * One attempt of a delivery's handler.
 * @typedef {{ attempt: number, started_at: string, outcome: string, duration_ms: number | null, error: string | null }} Attempt
 */
/**
 * A delivery with its body, headers and attempts (GET /inbox/{source}/{event_id}).
 * @typedef {import('./inbound.js').Delivery & {
 *   body: string, body_encoding: 'utf8' | 'base64', body_trimmed_at: string | null, body_erased_at: string | null, headers: Record<string, string> | null,
 *   occurred_at: string | null, processed_at: string | null, next_attempt_at: string | null, result_ref: string | null,
 *   attempt_history: Attempt[] | null,
 * }} DeliveryDetail
 */

const words = wordsOf('delivery');
const { t, word } = words;

/** @type {import('./widgets.js').Column<Attempt>[]} */
const attemptColumns = [
  { text: '#', value: (a) => String(a.attempt) },
  { label: 'started', value: (a) => formatTime(a.started_at) },
  { label: 'outcome', status: (a) => a.outcome, className: (a) => `outcome-${a.outcome}` },
  { label: 'ms', value: (a) => (a.duration_ms == null ? '' : String(a.duration_ms)) },
  { label: 'error', value: (a) => a.error },
];

/**
 * The body as received, and pretty-printed when it is JSON.
 * @param {DeliveryDetail} d
 */
function bodies(d) {
  if (d.body_erased_at) {
    const note = t('bodyErased')(formatTime(d.body_erased_at));
    return { raw: note, pretty: note };
  }
  if (d.body_trimmed_at) {
    const note = t('bodyTrimmed')(formatTime(d.body_trimmed_at));
    return { raw: note, pretty: note };
  }
  if (d.body_encoding !== 'utf8') return { raw: d.body, pretty: d.body };
  try {
    return { raw: d.body, pretty: JSON.stringify(JSON.parse(d.body), null, 2) };
  } catch {
    return { raw: d.body, pretty: d.body };
  }
}

/** @param {DeliveryDetail} d */
function fieldList(d) {
  /** @type {[Parameters<typeof word>[1], unknown][]} */
  const fields = [
    ['source', d.source],
    ['eventId', d.event_id],
    ['status', statusText(d.status)],
    ['type', d.event_type],
    ['resource', d.resource_id],
    ['attempts', d.attempts],
    ['occurred', formatTime(d.occurred_at)],
    ['received', formatTime(d.received_at)],
    ['processed', formatTime(d.processed_at)],
    ['nextAttempt', formatTime(d.next_attempt_at)],
    ['resultRef', d.result_ref],
    ['lastError', d.last_error],
  ];
  return el(
    'dl',
    { id: 'detail-fields' },
    fields.flatMap(([key, value]) => [word('dt', key), el('dd', { dataset: { field: key } }, value == null ? '' : String(value))]),
  );
}

/**
 * Replays or discards the delivery, then shows it again with what happened.
 * @param {HTMLElement} section
 * @param {DeliveryDetail} d
 * @param {'replay' | 'discard'} path
 * @param {import('./api-types').ApiBody<'POST /inbox/{source}/{event_id}/replay'> | undefined} body
 * @param {(answer: { status: string }) => string} done
 */
async function act(section, d, path, body, done) {
  try {
    const r = await api('POST', `/inbox/${encodeURIComponent(d.source)}/${encodeURIComponent(d.event_id)}/${path}`, body);
    await render(section, d.source, d.event_id);
    message(section).textContent = done(r);
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    message(section).textContent = path === 'replay' ? t('replayRefused')(text) : text;
  }
}

/**
 * Erases the delivery's body and headers (KVKK, docs/erasure.md) once the operator confirms, then shows it again.
 * @param {HTMLElement} section
 * @param {DeliveryDetail} d
 */
async function erase(section, d) {
  if (!window.confirm(t('eraseConfirm'))) return;
  try {
    /** @type {{ inbound: { erased: number } }} */
    const r = await api('POST', '/erasures', { inbound: [{ source: d.source, event_id: d.event_id }], confirm: true });
    await render(section, d.source, d.event_id);
    message(section).textContent = t('erased')(r.inbound.erased);
  } catch (err) {
    message(section).textContent = err instanceof Error ? err.message : String(err);
  }
}

/** @param {HTMLElement} section */
const message = (section) => /** @type {HTMLElement} */ (section.querySelector('#detail-message'));

/**
 * @param {HTMLElement} section
 * @param {string} source
 * @param {string} eventId
 */
async function render(section, source, eventId) {
  /** @type {DeliveryDetail} */
  const d = await api('GET', `/inbox/${encodeURIComponent(source)}/${encodeURIComponent(eventId)}`);
  const { raw, pretty } = bodies(d);
  const bodyPre = el('pre', { id: 'detail-body' }, pretty);
  /** @param {'raw' | 'pretty'} which */
  const showBody = (which) => {
    bodyPre.textContent = which === 'raw' ? raw : pretty;
    bodyPre.dataset.view = which;
    section.querySelector('#body-pretty')?.classList.toggle('active', which === 'pretty');
    section.querySelector('#body-raw')?.classList.toggle('active', which === 'raw');
  };
  const attempts = table(attemptColumns, { words, bodyId: 'attempts', empty: 'noAttempts' });
  attempts.render(d.attempt_history ?? []);
  // A viewer has no replay or discard button (and the API would refuse them anyway).
  const operate = canOperate();
  section.replaceChildren(
    el(
      'div',
      { id: 'detail' },
      el('a', { id: 'back', className: 'button', href: lastListHash, dataset: { i18n: 'back' } }, t('back')),
      el('h1', { id: 'detail-title' }, `${d.source} / ${d.event_id}`),
      fieldList(d),
      d.resource_id
        ? el(
            'p',
            {},
            el('a', { id: 'detail-timeline', href: pageLink('timeline', [d.resource_id], { source: d.source }), dataset: { i18n: 'timeline' } }, t('timeline')),
          )
        : null,
      el(
        'div',
        { className: 'toolbar' },
        // A trimmed body has nothing left to replay (the API answers BODY_TRIMMED).
        operate && !d.body_trimmed_at && ['dead', 'done', 'stale'].includes(d.status)
          ? word('button', 'replay', {
              id: 'replay',
              type: 'button',
              on: { click: () => act(section, d, 'replay', { force: d.status === 'done' }, (r) => t('replayed')(statusText(r.status))) },
            })
          : null,
        operate && ['dead', 'stale', 'pending'].includes(d.status)
          ? word('button', 'discard', { id: 'discard', type: 'button', on: { click: () => act(section, d, 'discard', undefined, () => t('discarded')) } })
          : null,
        // Only a settled delivery can be erased (a pending or dead one would be processed with empty bytes).
        operate && !d.body_erased_at && ['done', 'stale', 'discarded'].includes(d.status)
          ? word('button', 'erase', { id: 'erase', type: 'button', on: { click: () => erase(section, d) } })
          : null,
      ),
      el('p', { id: 'detail-message', role: 'status' }),
      word('h2', 'headers'),
      // tekil stores only the headers it keeps (no signatures or secrets); shown as text, one a line.
      el(
        'pre',
        { id: 'detail-headers' },
        Object.entries(d.headers ?? {})
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n'),
      ),
      el(
        'h2',
        {},
        word('span', 'body'),
        ' ',
        word('button', 'pretty', { id: 'body-pretty', type: 'button', className: 'toggle', on: { click: () => showBody('pretty') } }),
        word('button', 'raw', { id: 'body-raw', type: 'button', className: 'toggle', on: { click: () => showBody('raw') } }),
      ),
      d.body_encoding === 'base64' ? word('p', 'base64', { className: 'note' }) : null,
      bodyPre,
      word('h2', 'attemptHistory'),
      attempts.node,
    ),
  );
  showBody('pretty');
}

/** @type {import('./lib.js').Page} */
export const deliveryPage = {
  id: 'delivery',
  navAs: 'inbound',
  words: 'delivery',
  async show(section, [source = '', eventId = '']) {
    await render(section, source, eventId);
  },
};
