// @ts-check
// The Webhooks page: every delivery of the tenant with the columns a merchant asks about (type, target
// URL, attempts, status, last HTTP code, response time, error, next attempt), filtered by type,
// status, time window and resource id, paged both ways, exported as CSV / Excel / PDF, and kept up to
// date live: the event stream (GET /api/v1/events) tells a tenant's session when one of its deliveries
// is made or changes, and the page shown is read again; while the stream is down, it is read every few
// seconds instead. Everything the API answers is already the tenant's own: the session is scoped to it.

import { api, canOperate, cell, el, formatTime, language, messageOf, nextTry, queryString, statusCell, statusText, t, word } from './lib.js';
import { browserZone, parseInput, timeInputProps } from '../dates.js';
import { statuses } from './words.js';

/**
 * A row of GET /deliveries.
 * @typedef {{ id: number, message_id: string, endpoint_id: string, url: string, status: string, attempts: number, next_attempt_at: string | null,
 *   last_status_code: number | null, last_error: string | null, last_duration_ms: number | null, created_at: string, event_type: string, resource_id: string | null }} DeliveryRow
 */

/** How often the open page asks again for its rows while the event stream is down. */
const POLL_MS = 3000;
/** Changes that arrive together are read in one go. */
const SETTLE_MS = 200;
const PAGE_SIZE = 25;
const FILTERS = ['type', 'status', 'since', 'until', 'resource_id'];

/** The filter of the page shown, by API parameter name (times as ISO). @type {Record<string, string>} */
let filter = {};
/** The cursors of the pages before the one shown (paging back), and the shown page's own. @type {(string | null)[]} */
let behind = [];
/** @type {string | null} */
let cursor = null;
/** @type {string | null} */
let nextCursor = null;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let settle;
/** The tenant's live stream while the page is shown. @type {EventSource | null} */
let stream = null;
/** Bumps when the page is left or shown again: a poll of an older showing is dropped. */
let showing = 0;
/** The answer the rows show, as text: a poll that brings the same leaves them be. */
let shown = '';

/** @param {Record<string, string>} query */
const pickFilter = (query) => Object.fromEntries(FILTERS.filter((k) => query[k]).map((k) => [k, String(query[k])]));

/** A time field in the language's format (web/dates.js). @param {string} id @param {string} [value] */
const timeInput = (id, value) => el('input', { id, ...timeInputProps(value, language()) });

/** @param {string} id */
const inputValue = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id)).value.trim();

/** A time field's text as ISO, or ''. @param {string} v */
const iso = (v) => parseInput(v)?.toISOString() ?? '';

function filterForm() {
  const status = el('select', { id: 'filter-status' }, el('option', { value: '', dataset: { i18n: 'anyStatus' } }, t('anyStatus')));
  for (const s of statuses) status.append(el('option', { value: s, dataset: { status: s } }, statusText(s)));
  status.value = filter.status ?? '';
  /** @param {import('./lib.js').WordKey} key @param {HTMLElement} input */
  const field = (key, input) => el('label', {}, word('span', key), input);
  return el(
    'form',
    {
      id: 'filters',
      className: 'filters',
      on: {
        submit: (e) => {
          e.preventDefault();
          const next = {
            type: inputValue('filter-type'),
            status: status.value,
            since: iso(inputValue('filter-since')),
            until: iso(inputValue('filter-until')),
            resource_id: inputValue('filter-resource'),
          };
          location.hash = `#/webhooks${queryString(next)}`;
        },
      },
    },
    field('type', el('input', { id: 'filter-type', type: 'text', value: filter.type ?? '', placeholder: 'invoice.paid' })),
    field('status', status),
    field('since', timeInput('filter-since', filter.since)),
    field('until', timeInput('filter-until', filter.until)),
    field('resource', el('input', { id: 'filter-resource', type: 'text', value: filter.resource_id ?? '' })),
    word('button', 'apply', { type: 'submit', className: 'primary' }),
    word('a', 'clear', { className: 'button', href: '#/webhooks' }),
  );
}

/** The export links: the same filter, every row of it (no paging), the tenant's own. */
function exportLinks() {
  // A download is a plain navigation, which carries no header: `portal=1` picks the portal's session cookie.
  // The file is in the portal's language, its times in the merchant's zone (the browser's), which it states.
  const q = queryString({ ...filter, lang: language(), tz: browserZone(), portal: '1' });
  return el(
    'span',
    { id: 'exports' },
    word('span', 'exportAs'),
    ' ',
    ...[
      ['csv', 'CSV'],
      ['xlsx', 'Excel'],
      ['pdf', 'PDF'],
    ].map(([format, label]) => el('a', { id: `export-${format}`, className: 'button', href: `/api/v1/deliveries/export.${format}${q}`, download: '' }, label)),
  );
}

const columns = /** @type {const} */ (['created', 'type', 'target', 'attempts', 'status', 'code', 'responseTime', 'error', 'nextAttempt']);

/** @param {DeliveryRow} d */
function row(d) {
  return el(
    'tr',
    {
      dataset: { delivery: String(d.id), message: d.message_id },
      on: { click: () => (location.hash = `#/delivery/${encodeURIComponent(d.message_id)}/${d.id}`) },
    },
    cell(formatTime(d.created_at)),
    cell(d.event_type),
    cell(d.url, 'wrap'),
    cell(d.attempts),
    statusCell(d.status),
    cell(d.last_status_code),
    cell(d.last_duration_ms),
    cell(d.last_error, 'wrap'),
    cell(nextTry(d)),
  );
}

/** @param {HTMLElement} section */
async function load(section) {
  const run = showing;
  /** @type {{ items: DeliveryRow[], next_cursor: string | null }} */
  const page = await api('GET', `/deliveries${queryString({ ...filter, cursor, limit: PAGE_SIZE })}`);
  if (run !== showing) return;
  nextCursor = page.next_cursor;
  section.querySelector('#live')?.classList.add('on');
  // A poll that changed nothing leaves the rows alone (no flicker under the pointer).
  const seen = JSON.stringify(page);
  if (seen === shown) return;
  shown = seen;
  const body = /** @type {HTMLElement} */ (section.querySelector('#deliveries'));
  body.replaceChildren(...page.items.map(row));
  if (page.items.length === 0) body.append(el('tr', {}, word('td', 'noDeliveries', { colSpan: columns.length, className: 'empty' })));
  /** @type {HTMLButtonElement} */ (section.querySelector('#page-newer')).disabled = behind.length === 0;
  /** @type {HTMLButtonElement} */ (section.querySelector('#page-older')).disabled = nextCursor === null;
}

/** Reads the page again once a burst of changes has settled; a failed read waits for the next. @param {HTMLElement} section */
function refresh(section) {
  clearTimeout(settle);
  settle = setTimeout(() => load(section).catch(() => section.querySelector('#live')?.classList.remove('on')), SETTLE_MS);
}

/** The stream of the tenant's deliveries (`event: outbound`); the browser reconnects it by itself. @param {HTMLElement} section */
function listen(section) {
  stream?.close();
  stream = new EventSource('/api/v1/events?portal=1', { withCredentials: true });
  stream.addEventListener('outbound', () => refresh(section));
  /** @param {'stream' | 'poll'} via how the page is kept up to date now */
  const mark = (via) => {
    const live = /** @type {HTMLElement | null} */ (section.querySelector('#live'));
    if (!live) return;
    live.dataset.via = via;
    live.classList.toggle('on', via === 'stream');
  };
  stream.addEventListener('open', () => mark('stream'));
  stream.addEventListener('error', () => mark('poll'));
}

/** While the stream is down, asks again every few seconds (a tab in the background asks nothing). @param {HTMLElement} section */
function poll(section) {
  clearTimeout(timer);
  const run = showing;
  timer = setTimeout(async () => {
    if (run !== showing) return;
    if (!document.hidden && stream?.readyState !== EventSource.OPEN) await load(section).catch(() => section.querySelector('#live')?.classList.remove('on'));
    if (run === showing) poll(section);
  }, POLL_MS);
}

/** @param {HTMLElement} section @param {(string | null)[]} stack @param {string | null} at */
async function goTo(section, stack, at) {
  behind = stack;
  cursor = at;
  showing++;
  shown = '';
  await load(section);
  poll(section);
}

/** Sends again the failed deliveries of the filter's window (the last 24 hours when it has none). */
async function resendFailed() {
  const message = /** @type {HTMLElement} */ (document.getElementById('webhooks-message'));
  try {
    const until = filter.until || new Date(Date.now() + 60_000).toISOString();
    const since = filter.since || new Date(Date.parse(until) - 86_400_000).toISOString();
    const r = await api('POST', '/deliveries/replay-failed', { since, until });
    message.textContent = t('failedResent')(r.replayed);
  } catch (err) {
    message.textContent = messageOf(err);
  }
}

/** @type {import('./lib.js').Page} */
export const webhooksPage = {
  id: 'webhooks',
  nav: 'webhooks',
  async show(section, _args, query) {
    const next = pickFilter(query);
    // The same filter again (coming back from a delivery) keeps the page the merchant was on.
    if (JSON.stringify(next) !== JSON.stringify(filter)) {
      filter = next;
      behind = [];
      cursor = null;
    }
    section.replaceChildren(
      el('h1', {}, word('span', 'webhooks'), ' ', word('span', 'live', { id: 'live' })),
      filterForm(),
      el(
        'div',
        { className: 'toolbar' },
        exportLinks(),
        el('span', { className: 'spacer' }),
        canOperate() ? word('button', 'resendFailed', { id: 'resend-failed', type: 'button', on: { click: resendFailed } }) : null,
      ),
      el('p', { id: 'webhooks-message', role: 'status' }),
      el('table', { id: 'webhooks-table' }, el('thead', {}, el('tr', {}, ...columns.map((c) => word('th', c)))), el('tbody', { id: 'deliveries' })),
      el(
        'div',
        { className: 'toolbar' },
        word('button', 'newer', {
          id: 'page-newer',
          type: 'button',
          disabled: true,
          on: { click: () => goTo(section, behind.slice(0, -1), behind.at(-1) ?? null) },
        }),
        word('button', 'older', { id: 'page-older', type: 'button', disabled: true, on: { click: () => goTo(section, [...behind, cursor], nextCursor) } }),
      ),
    );
    await goTo(section, behind, cursor);
    listen(section);
  },
  leave() {
    showing++;
    clearTimeout(timer);
    clearTimeout(settle);
    stream?.close();
    stream = null;
  },
};
