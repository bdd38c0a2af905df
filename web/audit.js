// @ts-check
// The Audit page: who changed what through the admin API, from where, and the outcome, newest first,
// filtered, with "More" following the cursor. Operators and the admin token may read it; a viewer is
// refused by the API (docs/audit.md). Reading it needs more than the view permission, so its requests
// carry the CSRF token; exports are the API's and the CLI's (a plain link cannot carry the header).

import { api, el, formatTime, navigate, pageLink, pick, queryString, wordsOf } from './lib.js';
import { filterForm, table } from './widgets.js';

/**
 * An audit row as the API gives it.
 * @typedef {{ id: string, at: string, actor: string, role: string | null, address: string | null, method: string, route: string, target: Record<string, unknown>, status: number, error_code: string | null, count: number, last_at: string | null }} AuditEvent
 */

/** @param {unknown} v */
const valueText = (v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));

/**
 * What a request was made to, as an operator reads it: `id m_123 · body: name=Kuru Kahve, timeout=5s`
 * rather than a JSON object. Only a value nested deeper (a list of event types) stays JSON.
 * @param {Record<string, unknown>} target
 */
export const targetText = (target) =>
  Object.entries(target)
    .map(([k, v]) =>
      typeof v === 'object' && v !== null && !Array.isArray(v)
        ? `${k}: ${Object.entries(v)
            .map(([kk, vv]) => `${kk}=${valueText(vv)}`)
            .join(', ')}`
        : `${k} ${valueText(v)}`,
    )
    .join(' · ');

const words = wordsOf('audit');
const { word } = words;

const FILTERS = /** @type {const} */ (['actor', 'route', 'since', 'until']);
const PAGE_SIZE = 100;

/** @type {import('./widgets.js').Column<AuditEvent>[]} */
const columns = [
  { label: 'at', value: (e) => formatTime(e.at) },
  { label: 'actor', value: (e) => e.actor },
  { label: 'role', value: (e) => e.role },
  { label: 'address', value: (e) => e.address },
  { label: 'method', value: (e) => e.method },
  { label: 'route', value: (e) => e.route },
  { label: 'target', value: (e) => targetText(e.target) },
  // A refusal row counts every refusal of its key in its minute: "401 × 1000".
  {
    label: 'outcome',
    value: (e) => (e.count > 1 ? `${e.status} × ${e.count}` : String(e.status)),
    className: (e) => (e.status >= 400 ? 'status-dead' : 'status-done'),
  },
  { label: 'errorCode', value: (e) => e.error_code },
];

/** @type {import('./lib.js').Page} */
export const auditPage = {
  id: 'audit',
  nav: 'audit',
  words: 'audit',
  async show(section, _args, query) {
    const filter = pick(query, FILTERS);
    const list = table(columns, {
      words,
      id: 'audit-table',
      bodyId: 'audit-rows',
      empty: 'noEvents',
      rowProps: (e) => ({ dataset: { id: e.id, status: String(e.status) } }),
    });
    /** @type {AuditEvent[]} */
    const shown = [];
    /** @type {string | null} */
    let next = null;
    const more = word('button', 'more', { id: 'audit-more', type: 'button' });
    const load = async () => {
      const page = await api('GET', `/audit${queryString({ ...filter, limit: PAGE_SIZE, cursor: next ?? undefined })}`);
      shown.push(...page.items);
      list.render(shown);
      next = page.next_cursor;
      more.hidden = !next;
    };
    more.addEventListener('click', () => void load());
    const fields = /** @type {import('./widgets.js').FilterField[]} */ ([
      { name: 'actor', label: 'actor' },
      { name: 'route', label: 'route' },
      { name: 'since', label: 'since', type: 'time' },
      { name: 'until', label: 'until', type: 'time' },
    ]);
    section.replaceChildren(
      el(
        'div',
        { id: 'audit' },
        word('h1', 'audit'),
        filterForm(words, 'audit-filter', fields, filter, (f) => navigate(pageLink('audit', [], f))),
        list.node,
        more,
      ),
    );
    await load();
  },
};
