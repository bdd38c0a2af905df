// The Review queue: the dead deliveries. An operator replays or discards the selected ones, or every
// one matching the filter as a background job: a dry-run count first, then the job with its progress
// and a cancel. A viewer sees the queue and the dry-run count only.

import { $, addMessages, api, canOperate, confirmDialog, el, filterForm, formatTime, navigate, pageLink, pick, queryString, t, table, word } from './lib.js';
import { FILTERS, filterFields } from './inbound.js';

addMessages({
  en: {
    review: 'Review queue', selectAll: 'select all on this page', replaySelected: 'Replay selected', discardSelected: 'Discard selected',
    matching: 'Everything matching this filter:', dryRun: 'Count (dry run)', replayAll: 'Replay all matching', discardAll: 'Discard all matching',
    cancelJob: 'Cancel job', emptyQueue: 'The review queue is empty.', lastError: 'last error',
    matchCount: (n) => (n === 1 ? '1 dead delivery matches.' : `${n} dead deliveries match.`), doneSelected: (changed, skipped) => `${changed} done, ${skipped} skipped (changed meanwhile).`,
    jobLine: (j) => `${j.kind} ${j.status}: ${j.processed} / ${j.total} (changed ${j.changed}, skipped ${j.skipped})`,
    confirmDiscard: (n) => (n === 1 ? 'Discard 1 delivery for good?' : `Discard ${n} deliveries for good?`),
  },
  tr: {
    review: 'İnceleme kuyruğu', selectAll: 'bu sayfadakilerin hepsini seç', replaySelected: 'Seçilenleri yeniden işle', discardSelected: 'Seçilenlerden vazgeç',
    matching: 'Bu filtreye uyan her şey:', dryRun: 'Say (deneme)', replayAll: 'Uyanların hepsini yeniden işle', discardAll: 'Uyanların hepsinden vazgeç',
    cancelJob: 'İşi durdur', emptyQueue: 'İnceleme kuyruğu boş.', lastError: 'son hata',
    matchCount: (n) => `${n} ölü teslimat uyuyor.`, doneSelected: (changed, skipped) => `${changed} tamam, ${skipped} atlandı (bu arada değişti).`,
    jobLine: (j) => `${j.kind} ${j.status}: ${j.processed} / ${j.total} (değişen ${j.changed}, atlanan ${j.skipped})`,
    confirmDiscard: (n) => `${n} teslimattan kalıcı olarak vazgeçilsin mi?`,
  },
});

/** The review queue's filter: the Inbound filter without the status (always dead). */
const REVIEW_FILTERS = FILTERS.filter((f) => f !== 'status');
const PAGE_SIZE = 100;
const state = { filter: {}, cursors: [], next: null, list: null, poll: null };

const selected = () => [...document.querySelectorAll('#review-rows input[type=checkbox]:checked')].map((c) => c.value.split('\u0000'));

const columns = () => [
  ...(canOperate() ? [{ text: '', cell: (d) => el('input', { type: 'checkbox', value: `${d.source}\u0000${d.event_id}`, on: { click: (e) => e.stopPropagation() } }) }] : []),
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
  $('review-next').disabled = !page.next_cursor;
  $('review-previous').disabled = state.cursors.length === 0;
}

async function actOnSelected(action) {
  const items = selected();
  if (items.length === 0) return;
  if (action === 'discard' && !(await confirmDialog(t('confirmDiscard')(items.length)))) return;
  let changed = 0;
  let skipped = 0;
  for (const [source, eventId] of items) {
    try {
      await api('POST', `/inbox/${encodeURIComponent(source)}/${encodeURIComponent(eventId)}/${action}`, action === 'replay' ? { force: false } : undefined);
      changed++;
    } catch (err) {
      if (err.status !== 409) throw err;
      skipped++;
    }
  }
  $('review-message').textContent = t('doneSelected')(changed, skipped);
  await loadPage();
}

async function dryRun() {
  const { matching } = await api('POST', '/jobs/dry-run', { filter: { ...state.filter, status: 'dead' } });
  $('dry-run-count').textContent = t('matchCount')(matching);
  $('dry-run-count').dataset.matching = String(matching);
  for (const id of ['replay-all', 'discard-all']) if ($(id)) $(id).disabled = matching === 0;
}

function showJob(job) {
  $('job').hidden = false;
  $('job-progress').max = Math.max(job.total, 1);
  $('job-progress').value = job.processed;
  $('job-status').textContent = t('jobLine')(job);
  $('job-status').dataset.status = job.status;
  $('job-cancel').hidden = job.status !== 'running';
}

async function watchJob(id) {
  clearInterval(state.poll);
  const tick = async () => {
    const job = await api('GET', `/jobs/${encodeURIComponent(id)}`);
    if (!$('job')) return clearInterval(state.poll);
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

async function startJob(kind) {
  const matching = Number($('dry-run-count').dataset.matching ?? 0);
  if (kind === 'inbox.discard' && !(await confirmDialog(t('confirmDiscard')(matching)))) return;
  const job = await api('POST', '/jobs', { kind, filter: { ...state.filter, status: 'dead' } });
  showJob(job);
  await watchJob(job.id);
}

export const reviewPage = {
  id: 'review',
  nav: 'review',
  async show(section, _args, query) {
    state.filter = pick(query, REVIEW_FILTERS);
    state.cursors = [];
    state.list = table(columns(), { id: 'review-table', bodyId: 'review-rows', empty: 'emptyQueue', rowProps: (d) => ({ dataset: { key: `${d.source}/${d.event_id}` }, on: { click: () => (location.hash = pageLink('delivery', [d.source, d.event_id])) } }) });
    const operate = canOperate();
    section.replaceChildren(
      el(
        'div',
        { id: 'review' },
        word('h1', 'review'),
        filterForm('review-filter', filterFields(REVIEW_FILTERS), state.filter, (filter) => navigate(pageLink('review', [], filter))),
        el(
          'div',
          { className: 'toolbar' },
          word('button', 'previous', { id: 'review-previous', type: 'button', on: { click: () => (state.cursors.pop(), loadPage()) } }),
          word('button', 'next', { id: 'review-next', type: 'button', on: { click: () => (state.cursors.push(state.next), loadPage()) } }),
          operate ? el('label', {}, el('input', { type: 'checkbox', id: 'select-all', on: { change: (e) => document.querySelectorAll('#review-rows input[type=checkbox]').forEach((c) => (c.checked = e.target.checked)) } }), ' ', word('span', 'selectAll')) : null,
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
        el('div', { id: 'job', className: 'toolbar', hidden: true }, el('progress', { id: 'job-progress', value: 0, max: 1 }), el('span', { id: 'job-status' }), word('button', 'cancelJob', { id: 'job-cancel', type: 'button' })),
        state.list.node,
      ),
    );
    await loadPage();
  },
  leave() {
    clearInterval(state.poll);
  },
};
