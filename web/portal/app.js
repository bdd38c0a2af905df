// @ts-check
// The merchant portal's shell: one tenant's view, opened through a portal link (the link sets a
// tenant-scoped session cookie and lands here). It reads the session (role, tenant, the provider's
// branding), builds the navigation, routes by location.hash, and switches the language.

import { api, el, language, session, setLanguage, t, translate } from './lib.js';
import { webhooksPage } from './webhooks.js';
import { deliveryPage } from './delivery.js';
import { settingsPage } from './settings.js';
import { eventTypesPage } from './event-types.js';

/** @typedef {import('./lib.js').Page} Page */

/** @type {Page[]} */
const pages = [webhooksPage, deliveryPage, eventTypesPage, settingsPage];
const DEFAULT_PAGE = 'webhooks';

/** @type {Page | null} */
let current = null;

/** @param {string} id */
const byId = (id) => {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing`);
  return found;
};

function parseHash() {
  const [path = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [id = '', ...args] = path.split('/').map(decodeURIComponent);
  return { id: id || DEFAULT_PAGE, args, query: Object.fromEntries(new URLSearchParams(query)) };
}

/** @param {Page} page */
function sectionOf(page) {
  let section = document.getElementById(`page-${page.id}`);
  if (!section) {
    section = el('section', { id: `page-${page.id}`, className: 'page' });
    byId('pages').append(section);
  }
  return section;
}

async function route() {
  if (!session.tenant) return;
  const { id, args, query } = parseHash();
  const page = pages.find((p) => p.id === id) ?? /** @type {Page} */ (pages.find((p) => p.id === DEFAULT_PAGE));
  if (current && current !== page) current.leave?.();
  current = page;
  for (const p of pages) sectionOf(p).hidden = p !== page;
  const navAs = page.id === 'delivery' ? 'webhooks' : page.id;
  for (const a of byId('nav').querySelectorAll('a')) a.classList.toggle('active', /** @type {HTMLElement} */ (a).dataset.page === navAs);
  const section = sectionOf(page);
  try {
    await page.show(section, args, query);
  } catch (err) {
    section.replaceChildren(el('p', { className: 'error page-error' }, err instanceof Error ? err.message : String(err)));
  }
}

/**
 * The provider's name, logo and colour (config portal.*). The colour is set through the CSSOM (the
 * CSP allows no inline style) and only when it is a plain CSS colour.
 * @param {{ name?: string | null, logo_url?: string | null, accent_color?: string | null } | undefined} portal
 */
function brand(portal) {
  const name = portal?.name ?? '';
  byId('brand-name').textContent = name;
  document.title = name ? `${name} · ${t('webhooks')}` : t('webhooks');
  const logo = /** @type {HTMLImageElement} */ (byId('brand-logo'));
  if (portal?.logo_url) {
    logo.src = portal.logo_url;
    logo.alt = name;
    logo.hidden = false;
  }
  if (portal?.accent_color && CSS.supports('color', portal.accent_color)) document.documentElement.style.setProperty('--accent', portal.accent_color);
}

function buildNav() {
  byId('nav').replaceChildren(
    ...pages
      .filter((p) => p.nav)
      .map((p) => el('a', { href: `#/${p.id}`, dataset: { page: p.id, i18n: /** @type {string} */ (p.nav) } }, String(t(/** @type {never} */ (p.nav))))),
  );
}

async function start() {
  document.documentElement.lang = language();
  const lang = /** @type {HTMLSelectElement} */ (byId('lang'));
  lang.value = language();
  buildNav();
  translate();
  lang.addEventListener('change', async () => {
    setLanguage(lang.value);
    document.documentElement.lang = language();
    translate();
    // Built again: dates and numbers follow the language too.
    await route();
  });
  window.addEventListener('hashchange', () => route());
  try {
    /** @type {{ role: 'admin' | 'operator' | 'viewer', csrf?: string, csrf_token?: string, tenant?: { id: string, name: string }, portal?: { name?: string, logo_url?: string, accent_color?: string } }} */
    const data = await api('GET', '/session');
    if (!data.tenant) throw new Error('not a tenant session');
    session.csrfToken = data.csrf ?? data.csrf_token ?? null;
    session.role = data.role;
    session.tenant = data.tenant;
    brand(data.portal);
    byId('tenant-name').textContent = data.tenant.name || data.tenant.id;
    byId('nav').hidden = false;
    await route();
  } catch {
    // No tenant session (the link was not opened, or the session ended): say where the portal opens from.
    byId('signed-out').hidden = false;
  }
}

start();
