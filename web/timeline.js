// @ts-check
// The Resource timeline: every event of one resource (an invoice, `inv_…`) in provider order — which
// were applied, which were stale and why (the ordering guard's reason), their delivery ids and attempts.

import { api, el, formatTime, navigate, pageLink, queryString, wordsOf } from './lib.js';
import { table } from './widgets.js';

/**
 * One event of the resource, with the ordering guard's verdict.
 * @typedef {{ source: string, event_id: string, event_type: string, provider_at: string | null, received_at: string, verdict: string, reason: string | null, attempts: number }} TimelineEvent
 */

const words = wordsOf('timeline');
const { t, word } = words;

/** @type {import('./widgets.js').Column<TimelineEvent>[]} */
const columns = [
  { label: 'providerTime', value: (e) => formatTime(e.provider_at) },
  { label: 'received', value: (e) => formatTime(e.received_at) },
  { label: 'source', value: (e) => e.source },
  { label: 'eventId', cell: (e) => el('a', { href: pageLink('delivery', [e.source, e.event_id]) }, e.event_id) },
  { label: 'type', value: (e) => e.event_type },
  { label: 'verdict', status: (e) => e.verdict, className: (e) => `verdict-${e.verdict}` },
  { label: 'reason', value: (e) => e.reason },
  { label: 'attempts', value: (e) => String(e.attempts) },
];

/** @type {import('./lib.js').Page} */
export const timelinePage = {
  id: 'timeline',
  nav: 'timeline',
  words: 'timeline',
  async show(section, [resourceId = ''], query) {
    const resource = el('input', { id: 'timeline-resource', name: 'resource_id', value: resourceId, required: true, placeholder: 'inv_…' });
    const source = el('input', { id: 'timeline-source', name: 'source', value: query.source ?? '' });
    const form = el(
      'form',
      { id: 'timeline-form', className: 'filters' },
      el('label', {}, word('span', 'resourceId'), resource),
      el('label', {}, word('span', 'source'), source),
      word('button', 'show', { type: 'submit' }),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      navigate(pageLink('timeline', [resource.value.trim()], { source: source.value.trim() }));
    });
    const events = table(columns, {
      words,
      id: 'timeline-table',
      bodyId: 'timeline-rows',
      empty: 'noEvents',
      rowProps: (e) => ({ dataset: { key: `${e.source}/${e.event_id}`, verdict: e.verdict } }),
    });
    const current = el('ul', { id: 'timeline-current' });
    const note = el('p', { id: 'timeline-note', className: 'note' });
    section.replaceChildren(el('div', { id: 'timeline' }, word('h1', 'timeline'), form, current, note, events.node));
    if (!resourceId) return;
    const data = await api('GET', `/resources/${encodeURIComponent(resourceId)}/timeline${queryString({ source: query.source })}`);
    current.replaceChildren(...data.current.map((/** @type {import('./words-timeline.js').CurrentState} */ s) => el('li', {}, t('currentState')(s))));
    note.textContent = data.truncated ? t('truncated') : '';
    events.render(data.events);
  },
};
