// @ts-check
// Incidents: what the alerts opened (docs/alerts.md), newest first, open or closed, with a banner
// while any is open.

import { api, el, formatTime, navigate, pageLink, queryString, wordsOf } from './lib.js';
import { table } from './widgets.js';

/**
 * @typedef {{ id: string, rule: string, subject: string, state: 'open' | 'closed', opened_at: string, closed_at: string | null, last_value: number | null, summary: string }} Incident
 */

const words = wordsOf('incidents');
const { t, word } = words;

/** @type {import('./widgets.js').Column<Incident>[]} */
const columns = [
  { label: 'opened', value: (i) => formatTime(i.opened_at) },
  { label: 'closedAt', value: (i) => (i.closed_at ? formatTime(i.closed_at) : '—') },
  { label: 'rule', value: (i) => i.rule },
  { label: 'subject', value: (i) => i.subject },
  { label: 'lastValue', value: (i) => (i.last_value === null ? '' : String(i.last_value)) },
  { label: 'summary', value: (i) => i.summary },
];

/** @type {import('./lib.js').Page} */
export const incidentsPage = {
  id: 'incidents',
  nav: 'incidents',
  words: 'incidents',
  async show(section, _args, query) {
    const state = el(
      'select',
      { id: 'incidents-state', name: 'state' },
      .../** @type {const} */ ([
        ['', 'all'],
        ['open', 'open'],
        ['closed', 'closed'],
      ]).map(([s, label]) => word('option', label, { value: s, selected: (query.state ?? '') === s })),
    );
    const form = el(
      'form',
      { id: 'incidents-form', className: 'filters' },
      el('label', {}, word('span', 'state'), state),
      word('button', 'show', { type: 'submit' }),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      navigate(pageLink('incidents', [], { state: state.value }));
    });
    const list = table(columns, {
      words,
      id: 'incidents-table',
      bodyId: 'incidents-rows',
      empty: 'noIncidents',
      rowProps: (i) => ({ dataset: { id: i.id, state: i.state } }),
    });
    const banner = el('p', { id: 'incidents-banner', className: 'error' });
    const more = el('p', {});
    section.replaceChildren(el('div', { id: 'incidents' }, word('h1', 'incidents'), banner, form, list.node, more));
    const [open, page] = await Promise.all([
      api('GET', `/incidents${queryString({ state: 'open', limit: '500' })}`),
      api('GET', `/incidents${queryString({ state: query.state || undefined, before: query.before })}`),
    ]);
    banner.textContent = open.incidents.length > 0 ? t('openBanner')(open.incidents.length) : '';
    banner.hidden = open.incidents.length === 0;
    list.render(page.incidents);
    more.replaceChildren(
      page.next_before ? el('a', { id: 'incidents-more', href: pageLink('incidents', [], { state: query.state, before: page.next_before }) }, t('more')) : '',
    );
  },
};
