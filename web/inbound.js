// @ts-check
// The Inbound page: every delivery, filtered, paged by cursor (next and previous), new ones and changes
// of state arriving live over the event stream; exports of the current filter.

import { $, api, el, find, formatTime, navigate, pageLink, pick, queryString, wordsOf } from './lib.js';
import { filterForm, table } from './widgets.js';

/** @typedef {import('./widgets.js').Filter} Filter */
/** @typedef {import('./widgets.js').FilterField} FilterField */
/**
 * A delivery as the list and the event stream give it.
 * @typedef {{ source: string, event_id: string, event_type: string, resource_id: string | null, status: string, attempts: number, received_at: string, last_error?: string | null }} Delivery
 */

const words = wordsOf('inbound');
const { t, word } = words;

export const STATUSES = ['pending', 'processing', 'done', 'stale', 'dead', 'discarded'];
/** The list's filter parameters, as the API names them. */
export const FILTERS = /** @type {const} */ (['source', 'type', 'status', 'resource_id', 'event_id', 'since', 'until', 'min_attempts']);
/**
 * The filter form's fields of these names (their labels are delivery field words every such page has).
 * @param {readonly string[]} names
 * @returns {FilterField[]}
 */
export const filterFields = (names) =>
  /** @type {FilterField[]} */ ([
    { name: 'source', label: 'source' },
    { name: 'type', label: 'type' },
    { name: 'status', label: 'status', type: 'select', options: STATUSES },
    { name: 'resource_id', label: 'resourceId' },
    { name: 'event_id', label: 'eventId' },
    { name: 'since', label: 'since', type: 'time' },
    { name: 'until', label: 'until', type: 'time' },
    { name: 'min_attempts', label: 'minAttempts', type: 'number' },
  ]).filter((f) => names.includes(f.name));

const PAGE_SIZE = 100;
/** The hash of the Inbound list last shown: the detail's way back. */
export let lastListHash = '#/inbound';

/**
 * Whether a delivery from the stream belongs in the list under this filter.
 * @param {Filter} filter
 * @param {Delivery} item
 */
function matches(filter, item) {
  if (filter.source && item.source !== filter.source) return false;
  if (filter.type && item.event_type !== filter.type) return false;
  if (filter.status && item.status !== filter.status) return false;
  if (filter.resource_id && item.resource_id !== filter.resource_id) return false;
  if (filter.event_id && item.event_id !== filter.event_id) return false;
  if (filter.min_attempts && item.attempts < Number(filter.min_attempts)) return false;
  if (filter.since && new Date(item.received_at) < new Date(filter.since)) return false;
  if (filter.until && new Date(item.received_at) >= new Date(filter.until)) return false;
  return true;
}

/** @type {import('./widgets.js').Column<Delivery>[]} */
const columns = [
  { label: 'received', value: (d) => formatTime(d.received_at) },
  { label: 'source', value: (d) => d.source },
  { label: 'eventId', value: (d) => d.event_id },
  { label: 'type', value: (d) => d.event_type },
  { label: 'resourceId', value: (d) => d.resource_id },
  { label: 'status', status: (d) => d.status, className: (d) => `status-${d.status}` },
  { label: 'attempts', value: (d) => String(d.attempts) },
];

/** @type {EventSource | null} */
let events = null;
const state = {
  /** @type {Filter} */ filter: {},
  /** @type {string[]} */ cursors: [],
  /** @type {string | null} */ next: null,
  /** @type {Map<string, HTMLTableRowElement>} */ rows: new Map(),
  list: table(columns, { words, bodyId: 'rows', id: 'inbound-table', rowProps, empty: 'noDeliveries' }),
};

/** @param {Delivery} d */
function rowProps(d) {
  const key = `${d.source}/${d.event_id}`;
  return { dataset: { key, status: d.status }, on: { click: () => (location.hash = pageLink('delivery', [d.source, d.event_id])) } };
}

/** @param {Delivery} item */
function upsert(item) {
  const key = `${item.source}/${item.event_id}`;
  const fresh = state.list.row(item);
  const old = state.rows.get(key);
  state.rows.set(key, fresh);
  if (old) old.replaceWith(fresh);
  else if (state.cursors.length === 0 && matches(state.filter, item)) {
    $('rows').querySelector('td.empty')?.parentElement?.remove();
    $('rows').prepend(fresh);
  }
}

async function loadPage() {
  const cursor = state.cursors[state.cursors.length - 1];
  const page = await api('GET', `/inbox${queryString({ ...state.filter, limit: PAGE_SIZE, cursor })}`);
  state.rows.clear();
  state.list.render(page.items);
  for (const tr of $('rows', HTMLTableSectionElement).rows) if (tr.dataset.key) state.rows.set(tr.dataset.key, tr);
  state.next = page.next_cursor;
  $('next-page', HTMLButtonElement).disabled = !page.next_cursor;
  $('previous-page', HTMLButtonElement).disabled = state.cursors.length === 0;
  $('page-number').textContent = t('pageN')(state.cursors.length + 1);
}

function startLive() {
  events?.close();
  events = new EventSource('/api/v1/events');
  events.onopen = () => find('live')?.classList.add('on');
  events.onerror = () => find('live')?.classList.remove('on');
  events.addEventListener('delivery', (e) => upsert(JSON.parse(e.data)));
}

/**
 * @param {string} format
 * @param {'exportCsv' | 'exportXlsx' | 'exportPdf'} label
 */
function exportLink(format, label) {
  return word('a', label, {
    id: `export-${format}`,
    className: 'button',
    href: `/api/v1/inbox/export.${format}${queryString(pick(state.filter, FILTERS))}`,
    download: `tekil-inbox.${format}`,
  });
}

/** @type {import('./lib.js').Page} */
export const inboundPage = {
  id: 'inbound',
  nav: 'inbound',
  words: 'inbound',
  async show(section, _args, query) {
    state.filter = pick(query, FILTERS);
    state.cursors = [];
    lastListHash = location.hash || '#/inbound';
    state.list = table(columns, { words, bodyId: 'rows', id: 'inbound-table', rowProps, empty: 'noDeliveries' });
    section.replaceChildren(
      el(
        'div',
        { id: 'inbound' },
        el('h1', {}, word('span', 'inbound'), ' ', el('span', { id: 'live', dataset: { i18nTitle: 'live' }, title: t('live') }, '●')),
        filterForm(words, 'inbound-filter', filterFields(FILTERS), state.filter, (filter) => navigate(pageLink('inbound', [], filter))),
        el(
          'div',
          { className: 'toolbar' },
          word('button', 'previous', { id: 'previous-page', type: 'button', on: { click: () => (state.cursors.pop(), loadPage()) } }),
          el('span', { id: 'page-number' }),
          word('button', 'next', { id: 'next-page', type: 'button', on: { click: () => (state.next && state.cursors.push(state.next), loadPage()) } }),
          el('span', { className: 'spacer' }),
          word('span', 'export'),
          exportLink('csv', 'exportCsv'),
          exportLink('xlsx', 'exportXlsx'),
          exportLink('pdf', 'exportPdf'),
        ),
        state.list.node,
      ),
    );
    await loadPage();
    startLive();
  },
  relabel() {
    $('page-number').textContent = t('pageN')(state.cursors.length + 1);
  },
  leave() {
    events?.close();
    events = null;
  },
};
