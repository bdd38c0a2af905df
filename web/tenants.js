// @ts-check
// The Tenants page: the tenants (one per merchant) in id order, searched by id or name, with "More"
// following the cursor, and each one's health over a window: its endpoints, the failing ones and why,
// the success rate of its deliveries, and those pending and failed. "Open portal" asks the API for a
// one-time portal link and opens it in a new tab, so an operator sees what that merchant sees.

import { api, canOperate, el, navigate, pageLink, pick, queryString, wordsOf } from './lib.js';
import { filterForm, table } from './widgets.js';
import { editTenantSettings } from './tenant-settings.js';

/**
 * A tenant with its health, as GET /stats/tenants gives it.
 * @typedef {{
 *   id: string, name: string | null, disabled: boolean, endpoints: number, failing_endpoints: number,
 *   failing: { endpoint_id: string, reason: 'disabled_after_failures' | 'breaker_open' | 'failing_in_a_row' | 'low_success_rate' }[],
 *   attempted: number, succeeded: number, success_rate: number | null, pending: number, pending_more: boolean, failed: number,
 * }} TenantHealth
 */

const words = wordsOf('tenants');
const { t, word } = words;

const PAGE_SIZE = 50;
const WINDOWS = ['15m', '1h', '24h'];
const DEFAULT_WINDOW = '1h';

/** @param {number | null} rate */
const percent = (rate) => (rate === null ? '—' : `${Math.round(rate * 1000) / 10}%`);

/**
 * Opens a one-time portal link for the tenant in a new tab. The tab is opened at the click, before the
 * API answers, so no popup blocker takes it for an unasked window; it is cut from this page
 * (`opener = null`) and then sent to the link. If the browser refused the tab, the link is shown.
 * @param {string} tenantId
 * @param {HTMLElement} note where to say what happened
 */
async function openPortal(tenantId, note) {
  const tab = window.open('about:blank', '_blank');
  if (tab) tab.opener = null;
  try {
    const link = await api('POST', `/tenants/${encodeURIComponent(tenantId)}/portal-links`, {});
    if (tab) {
      tab.location.href = link.url;
      note.replaceChildren(word('span', 'portalOpened'));
    } else {
      note.replaceChildren(word('span', 'portalBlocked'), ' ', word('a', 'openLink', { href: link.url, target: '_blank', rel: 'noopener' }));
    }
  } catch (err) {
    tab?.close();
    note.replaceChildren(el('span', { className: 'error' }, err instanceof Error ? err.message : String(err)));
  }
}

/** @type {import('./lib.js').Page} */
export const tenantsPage = {
  id: 'tenants',
  nav: 'tenants',
  words: 'tenants',
  async show(section, _args, query) {
    const filter = pick(query, ['q']);
    const span = WINDOWS.includes(query.window ?? '') ? query.window : DEFAULT_WINDOW;
    const note = el('p', { id: 'tenants-note', className: 'note' });
    /** @type {import('./widgets.js').Column<TenantHealth>[]} */
    const columns = [
      { label: 'id', value: (x) => x.id },
      { label: 'name', value: (x) => x.name },
      { label: 'state', value: (x) => t(x.disabled ? 'tenantDisabled' : 'tenantActive'), className: (x) => (x.disabled ? 'status-dead' : '') },
      { label: 'endpointCount', value: (x) => String(x.endpoints) },
      {
        label: 'failingEndpoints',
        cell: (x) =>
          el(
            'span',
            {
              className: x.failing_endpoints > 0 ? 'failing status-dead' : 'failing',
              title: x.failing.map((f) => `${f.endpoint_id}: ${t(f.reason)}`).join('\n'),
            },
            String(x.failing_endpoints),
          ),
      },
      { label: 'successRate', value: (x) => percent(x.success_rate), className: (x) => (x.success_rate !== null && x.success_rate < 0.5 ? 'status-dead' : '') },
      { label: 'pending', value: (x) => `${x.pending}${x.pending_more ? '+' : ''}` },
      { label: 'failed', value: (x) => String(x.failed), className: (x) => (x.failed > 0 ? 'status-dead' : '') },
      {
        label: 'actions',
        cell: (x) =>
          canOperate()
            ? el(
                'span',
                {},
                word('button', 'openPortal', { type: 'button', className: 'open-portal', on: { click: () => void openPortal(x.id, note) } }),
                ' ',
                word('button', 'settings', {
                  type: 'button',
                  className: 'tenant-settings',
                  on: {
                    click: () =>
                      void editTenantSettings(x.id, note).catch((err) =>
                        note.replaceChildren(el('span', { className: 'error' }, err instanceof Error ? err.message : String(err))),
                      ),
                  },
                }),
              )
            : document.createTextNode(''),
      },
    ];
    const list = table(columns, {
      words,
      id: 'tenants-table',
      bodyId: 'tenants-rows',
      empty: 'noTenants',
      rowProps: (x) => ({ dataset: { id: x.id, failing: String(x.failing_endpoints) } }),
    });
    /** @type {TenantHealth[]} */
    const shown = [];
    /** @type {string | null} */
    let next = null;
    const more = word('button', 'more', { id: 'tenants-more', type: 'button' });
    const load = async () => {
      const page = await api('GET', `/stats/tenants${queryString({ ...filter, window: span, limit: PAGE_SIZE, after: next ?? undefined })}`);
      shown.push(...page.items);
      list.render(shown);
      next = page.next_cursor;
      more.hidden = !next;
    };
    more.addEventListener('click', () => void load());
    const windowSelect = el(
      'select',
      { id: 'tenants-window', name: 'window', on: { change: () => navigate(pageLink('tenants', [], { ...filter, window: windowSelect.value })) } },
      WINDOWS.map((w) => el('option', { value: w }, w)),
    );
    windowSelect.value = span ?? DEFAULT_WINDOW;
    section.replaceChildren(
      el(
        'div',
        { id: 'tenants' },
        word('h1', 'tenants'),
        filterForm(words, 'tenants-filter', [{ name: 'q', label: 'search' }], filter, (f) =>
          navigate(pageLink('tenants', [], { ...f, ...(span === DEFAULT_WINDOW ? {} : { window: span }) })),
        ),
        el('div', { className: 'filters' }, el('label', {}, word('span', 'window'), windowSelect)),
        note,
        list.node,
        more,
      ),
    );
    await load();
  },
};
