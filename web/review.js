// @ts-check
// The Review queue: the dead deliveries. An operator replays or discards the selected ones, or every
// one matching the filter as a background job: a dry-run count first, then the job with its progress
// and a cancel. A viewer sees the queue and the dry-run count only.

import { $, api, ApiError, canOperate, el, find, formatTime, navigate, pageLink, pick, queryString, statusText, wordsOf } from './lib.js';
import { confirmDialog, filterForm, table } from './widgets.js';
import { FILTERS, filterFields } from './inbound.js';

/** @typedef {import('./inbound.js').Delivery} Delivery */
/** @typedef {import('./words-review.js').JobLine & { id: string }} Job */

const words = wordsOf('review');
const { t, word } = words;

/** The review queue's filter: the Inbound filter without the status (always dead). */
const REVIEW_FILTERS = FILTERS.filter((f) => f !== 'status');
const PAGE_SIZE = 100;
const state = {
  /** @type {import('./widgets.js').Filter} */ filter: {},
  /** @type {string[]} */ cursors: [],
  /** @type {string | null} */ next: null,
  list: table(/** @type {import('./widgets.js').Column<Delivery>[]} */ ([]), { words }),
  /** @type {ReturnType<typeof setInterval> | undefined} */ poll: undefined,
};

/** @returns {HTMLInputElement[]} */
const checkboxes = (checked = false) =>
  [...document.querySelectorAll(`#review-rows input[type=checkbox]${checked ? ':checked' : ''}`)].filter((c) => c instanceof HTMLInputElement);
const selected = () => checkboxes(true).map((c) => c.value.split('\u0000'));

/** @type {() => import('./widgets.js').Column<Delivery>[]} */
const columns = () => [
  ...(canOperate()
    ? [
        {
          text: '',
          cell: (/** @type {Delivery} */ d) =>
            el('input', { type: 'checkbox', value: `${d.source}\u0000${d.event_id}`, on: { click: (e) => e.stopPropagation() } }),
        },
      ]
    : []),
  { label: 'received', value: (d) => formatTime(d.received_at) },
  { label: 'source', value: (d) => d.source },
  { label: 'eventId', value: (d) => d.event_id },
  { label: 'type', value: (d) => d.event_type },
  { label: 'attempts', value: (d) => String(d.attempts) },
  { label: 'lastError', value: (d) => d.last_error },
];

async function loadPage() {
  const cursor = state.cursors[state.cursors.length - 1];
  const page = await api('GET', `/inbox${queryString({ ...state.filter, status: 'dead', limit: PAGE_SIZE, cursor })}`);
  state.list.render(page.items);
  state.next = page.next_cursor;
  $('review-next', HTMLButtonElement).disabled = !page.next_cursor;
  $('review-previous', HTMLButtonElement).disabled = state.cursors.length === 0;
}

/** @param {'replay' | 'discard'} action */
async function actOnSelected(action) {
  const items = selected();
  if (items.length === 0) return;
  if (action === 'discard' && !(await confirmDialog(t('confirmDiscard')(items.length)))) return;
  let changed = 0;
  let skipped = 0;
  for (const [source = '', eventId = ''] of items) {
    try {
      await api('POST', `/inbox/${encodeURIComponent(source)}/${encodeURIComponent(eventId)}/${action}`, action === 'replay' ? { force: false } : undefined);
      changed++;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
      skipped++;
    }
  }
  $('review-message').textContent = t('doneSelected')(changed, skipped);
  await loadPage();
}

/**
 * The queue's filter as a job takes it: the dead deliveries matching the form.
 * @returns {NonNullable<import('./api-types').ApiBody<'POST /jobs'>['filter']>}
 */
function jobFilter() {
  const { min_attempts: minAttempts, ...text } = state.filter;
  return { ...text, status: 'dead', ...(minAttempts ? { min_attempts: Number(minAttempts) } : {}) };
}

async function dryRun() {
  const { matching } = await api('POST', '/jobs/dry-run', { filter: jobFilter() });
  $('dry-run-count').textContent = t('matchCount')(matching);
  $('dry-run-count').dataset.matching = String(matching);
  for (const id of ['replay-all', 'discard-all']) {
    const button = find(id);
    if (button instanceof HTMLButtonElement) button.disabled = matching === 0;
  }
}

/** @param {Job} job */
function showJob(job) {
  $('job').hidden = false;
  $('job-progress', HTMLProgressElement).max = Math.max(job.total, 1);
  $('job-progress', HTMLProgressElement).value = job.processed;
  $('job-status').textContent = t('jobLine')({ ...job, kind: statusText(job.kind), status: statusText(job.status) });
  $('job-status').dataset.status = job.status;
  $('job-cancel').hidden = job.status !== 'running';
}

/** @param {string} id */
async function watchJob(id) {
  clearInterval(state.poll);
  const tick = async () => {
    /** @type {Job} */
    const job = await api('GET', `/jobs/${encodeURIComponent(id)}`);
    if (!find('job')) return clearInterval(state.poll);
    showJob(job);
    if (job.status !== 'running') {
      clearInterval(state.poll);
      await loadPage();
    }
  };
  state.poll = setInterval(() => tick().catch(() => clearInterval(state.poll)), 500);
  $('job-cancel').onclick = async () => showJob(await api('POST', `/jobs/${encodeURIComponent(id)}/cancel`));
  await tick();
}

/** @param {'inbox.replay' | 'inbox.discard'} kind */
async function startJob(kind) {
  const matching = Number($('dry-run-count').dataset.matching ?? 0);
  if (kind === 'inbox.discard' && !(await confirmDialog(t('confirmDiscard')(matching)))) return;
  /** @type {import('./api-types').ApiBody<'POST /jobs'>} */
  const body = { kind, filter: jobFilter() };
  const job = await api('POST', '/jobs', body);
  showJob(job);
  await watchJob(job.id);
}

/** @type {import('./lib.js').Page} */
export const reviewPage = {
  id: 'review',
  nav: 'review',
  words: 'review',
  async show(section, _args, query) {
    state.filter = pick(query, REVIEW_FILTERS);
    state.cursors = [];
    state.list = table(columns(), {
      words,
      id: 'review-table',
      bodyId: 'review-rows',
      empty: 'emptyQueue',
      rowProps: (d) => ({ dataset: { key: `${d.source}/${d.event_id}` }, on: { click: () => (location.hash = pageLink('delivery', [d.source, d.event_id])) } }),
    });
    const operate = canOperate();
    section.replaceChildren(
      el(
        'div',
        { id: 'review' },
        word('h1', 'review'),
        filterForm(words, 'review-filter', filterFields(REVIEW_FILTERS), state.filter, (filter) => navigate(pageLink('review', [], filter))),
        el(
          'div',
          { className: 'toolbar' },
          word('button', 'previous', { id: 'review-previous', type: 'button', on: { click: () => (state.cursors.pop(), loadPage()) } }),
          word('button', 'next', { id: 'review-next', type: 'button', on: { click: () => (state.next && state.cursors.push(state.next), loadPage()) } }),
          operate
            ? el(
                'label',
                {},
                el('input', {
                  type: 'checkbox',
                  id: 'select-all',
                  on: { change: (/** @type {Event} */ e) => checkboxes().forEach((c) => (c.checked = /** @type {HTMLInputElement} */ (e.target).checked)) },
                }),
                ' ',
                word('span', 'selectAll'),
              )
            : null,
          operate ? word('button', 'replaySelected', { id: 'replay-selected', type: 'button', on: { click: () => actOnSelected('replay') } }) : null,
          operate ? word('button', 'discardSelected', { id: 'discard-selected', type: 'button', on: { click: () => actOnSelected('discard') } }) : null,
        ),
        el('p', { id: 'review-message', role: 'status' }),
        el(
          'div',
          { className: 'toolbar' },
          word('span', 'matching'),
          word('button', 'dryRun', { id: 'dry-run', type: 'button', on: { click: dryRun } }),
          el('span', { id: 'dry-run-count' }),
          operate ? word('button', 'replayAll', { id: 'replay-all', type: 'button', disabled: true, on: { click: () => startJob('inbox.replay') } }) : null,
          operate ? word('button', 'discardAll', { id: 'discard-all', type: 'button', disabled: true, on: { click: () => startJob('inbox.discard') } }) : null,
        ),
        el(
          'div',
          { id: 'job', className: 'toolbar', hidden: true },
          el('progress', { id: 'job-progress', value: 0, max: 1 }),
          el('span', { id: 'job-status' }),
          word('button', 'cancelJob', { id: 'job-cancel', type: 'button' }),
        ),
        state.list.node,
      ),
    );
    await loadPage();
  },
  leave() {
    clearInterval(state.poll);
  },
};
