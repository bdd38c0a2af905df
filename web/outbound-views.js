// @ts-check
// The Outbound page's DOM: the endpoint list with the failed-deliveries replay, the endpoint form, the
// secret shown once, and an endpoint's detail with its message history and one message's attempts.
// Built empty; outbound.js fills it in. What changes things is hidden from a viewer.

import { el, language } from './lib.js';
import { timeInputProps } from './dates.js';

/** @typedef {ReturnType<typeof import('./lib.js').wordsOf<'outbound'>>} OutboundWords */

/**
 * @param {OutboundWords} words
 * @param {boolean} operate whether the caller may change things
 * @param {{ newEndpoint: () => void, back: () => void, replayFailed: (e: Event) => void }} on
 */
export function outboundViews({ word }, operate, on) {
  /** @param {string} id @param {string} [href] */
  const exportLinks = (id, href) =>
    ['csv', 'xlsx', 'pdf'].map((format) =>
      el('a', { id: `${id}-${format}`, href: href && `${href}.${format}`, download: true }, { csv: 'CSV', xlsx: 'Excel', pdf: 'PDF' }[format]),
    );
  /** @param {string} tbody @param {Parameters<typeof word>[1][]} headings @param {string[]} [first] */
  const history = (tbody, headings, first = []) =>
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          first.map((text) => el('th', {}, text)),
          headings.map((key) => word('th', key)),
        ),
      ),
      el('tbody', { id: tbody }),
    );
  /**
   * A control that changes something: hidden from a viewer (and the API would refuse it anyway).
   * @template {HTMLElement} E
   * @param {E} node
   */
  const operating = (node) => Object.assign(node, { hidden: !operate });

  const list = el(
    'div',
    { id: 'outbound-list' },
    word('h1', 'outbound'),
    el(
      'div',
      { className: 'toolbar' },
      operating(word('button', 'newEndpoint', { id: 'endpoint-new', type: 'button', on: { click: on.newEndpoint } })),
      word('span', 'exportDeliveries'),
      ...exportLinks('deliveries-export', '/api/v1/deliveries/export'),
    ),
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          word('th', 'endpoint'),
          word('th', 'tenant'),
          word('th', 'url'),
          .../** @type {const} */ (['state', 'successRate', 'latency', 'failingSince', 'failedInRow']).map((key) => word('th', key)),
        ),
      ),
      el('tbody', { id: 'endpoint-rows' }),
    ),
    operating(
      el(
        'form',
        { id: 'replay-failed', on: { submit: on.replayFailed } },
        word('h2', 'replayFailed'),
        el('label', {}, word('span', 'endpoint'), ' ', el('select', { id: 'replay-failed-endpoint' }, word('option', 'allEndpoints', { value: '' }))),
        el('label', {}, word('span', 'createdFrom'), ' ', el('input', { id: 'replay-failed-since', required: true, ...timeInputProps(null, language()) })),
        el('label', {}, word('span', 'createdUntil'), ' ', el('input', { id: 'replay-failed-until', required: true, ...timeInputProps(null, language()) })),
        ' ',
        word('button', 'replayFailedButton', { type: 'submit' }),
        ' ',
        el('span', { id: 'replay-failed-message', role: 'status' }),
      ),
    ),
  );

  const form = el(
    'form',
    { id: 'endpoint-form', hidden: true },
    el('h2', { id: 'endpoint-form-title' }),
    el('label', {}, 'URL ', el('input', { id: 'endpoint-url', type: 'url', required: true })),
    el('label', {}, word('span', 'description'), ' ', el('input', { id: 'endpoint-description' })),
    el('label', {}, word('span', 'eventTypes'), ' ', el('input', { id: 'endpoint-event-types' })),
    el('label', {}, el('input', { id: 'endpoint-enabled', type: 'checkbox', checked: true }), ' ', word('span', 'enabled')),
    el('div', { className: 'toolbar' }, word('button', 'save', { type: 'submit' }), ' ', word('button', 'cancel', { id: 'endpoint-cancel', type: 'button' })),
    el('p', { id: 'endpoint-form-error', role: 'alert' }),
  );

  const secret = el('div', { id: 'secret-once', hidden: true }, word('p', 'secretOnce'), el('code', { id: 'secret-value' }));

  const detail = el(
    'div',
    { id: 'endpoint-detail', hidden: true },
    word('button', 'backOutbound', { id: 'endpoint-back', type: 'button', on: { click: on.back } }),
    el('h1', { id: 'endpoint-title' }),
    el('dl', { id: 'endpoint-fields' }),
    el(
      'div',
      { className: 'toolbar' },
      operating(word('button', 'edit', { id: 'endpoint-edit', type: 'button' })),
      operating(el('button', { id: 'endpoint-toggle', type: 'button' })),
      operating(word('button', 'rotateSecret', { id: 'endpoint-rotate', type: 'button' })),
      operating(word('button', 'sendPing', { id: 'endpoint-ping', type: 'button' })),
      word('span', 'exportDeliveries'),
      ...exportLinks('endpoint-export'),
    ),
    el('p', { id: 'endpoint-message', role: 'status' }),
    word('h2', 'history'),
    history('endpoint-history', ['created', 'message', 'type', 'status', 'attempts', 'code', 'ms', 'error']),
    el(
      'div',
      { id: 'message-detail', hidden: true },
      el('h2', { id: 'message-title' }),
      word('button', 'replay', { id: 'message-replay', type: 'button', hidden: true }),
      ' ',
      el('span', { id: 'message-status', role: 'status' }),
      history('message-attempts', ['started', 'code', 'ms', 'error', 'response'], ['#']),
      word('h3', 'body'),
      el('pre', { id: 'message-payload' }),
    ),
  );

  return el('div', { id: 'outbound' }, list, form, secret, detail);
}
