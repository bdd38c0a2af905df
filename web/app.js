// @ts-check
// tekil's panel, the shell: sign-in and sign-out, the navigation, the router (by location.hash) and the
// language switch. Each page is its own module; the session lives in an HttpOnly cookie and the CSRF
// token in memory only.

import { $, api, ApiError, common, find, language, session, setLanguage, translate } from './lib.js';
import { deliveryPage } from './delivery.js';
import { inboundPage } from './inbound.js';
import { outboundPage } from './outbound.js';
import { overviewPage } from './overview.js';
import { reviewPage } from './review.js';
import { timelinePage } from './timeline.js';
import { incidentsPage } from './incidents.js';
import { auditPage } from './audit.js';
import { tenantsPage } from './tenants.js';

/** @typedef {import('./lib.js').Page} Page */

const { t } = common;

/**
 * The pages, by the first part of the hash (`#/inbound?…`, `#/delivery/shop/evt_1`). Each builds its
 * own DOM into its section, which carries its word namespace (`data-words`).
 * @type {Page[]}
 */
const pages = [
  // Inbound side
  inboundPage,
  deliveryPage,
  reviewPage,
  timelinePage,
  // Outbound side
  outboundPage,
  overviewPage,
  tenantsPage,
  // Operating
  incidentsPage,
  auditPage,
];
const DEFAULT_PAGE = 'inbound';

/** @type {Page | null} */
let current = null;

function parseHash() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [id = '', ...args] = path.split('/').map(decodeURIComponent);
  return { id: id || DEFAULT_PAGE, args, query: Object.fromEntries(new URLSearchParams(query)) };
}

/** @param {Page} page */
function sectionOf(page) {
  let section = find(`page-${page.id}`);
  if (!section) {
    section = document.createElement('section');
    section.id = `page-${page.id}`;
    section.className = 'page';
    section.dataset.words = page.words;
    $('pages').append(section);
  }
  return section;
}

async function route() {
  if (!session.role) return;
  const { id, args, query } = parseHash();
  const page = pages.find((p) => p.id === id) ?? /** @type {Page} */ (pages.find((p) => p.id === DEFAULT_PAGE));
  if (current && current !== page) current.leave?.();
  current = page;
  for (const p of pages) sectionOf(p).hidden = p !== page;
  for (const a of $('nav').querySelectorAll('a')) a.classList.toggle('active', a.dataset.page === (page.navAs ?? page.id));
  $('sign-in').hidden = true;
  sectionOf(page).querySelector(':scope > .page-error')?.remove();
  try {
    await page.show(sectionOf(page), args, query);
  } catch (err) {
    const message = Object.assign(document.createElement('p'), {
      className: 'error page-error',
      textContent: err instanceof Error ? err.message : String(err),
    });
    sectionOf(page).replaceChildren(message);
  }
  translate(sectionOf(page));
}

function buildNav() {
  const nav = $('nav');
  nav.replaceChildren();
  for (const page of pages) {
    if (!page.nav) continue;
    const a = document.createElement('a');
    a.href = `#/${page.id}`;
    a.dataset.page = page.id;
    a.dataset.i18n = page.nav;
    a.textContent = t(page.nav);
    nav.append(a);
  }
}

/** @param {{ csrf_token: string, role: 'admin' | 'operator' | 'viewer', name: string }} data */
async function signedIn(data) {
  session.csrfToken = data.csrf_token;
  session.role = data.role;
  session.name = data.name;
  $('who').textContent = `${data.name} (${data.role})`;
  $('sign-out').hidden = false;
  $('nav').hidden = false;
  await route();
}

function signedOut() {
  current?.leave?.();
  current = null;
  Object.assign(session, { csrfToken: null, role: null, name: null });
  $('who').textContent = '';
  $('sign-out').hidden = true;
  $('nav').hidden = true;
  for (const p of pages) sectionOf(p).hidden = true;
  $('sign-in').hidden = false;
}

async function start() {
  document.documentElement.lang = language();
  const lang = $('lang', HTMLSelectElement);
  lang.value = language();
  buildNav();
  translate();
  lang.addEventListener('change', () => {
    setLanguage(lang.value);
    document.documentElement.lang = language();
    translate();
    current?.relabel?.();
  });
  $('sign-in').addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const token = $('token', HTMLInputElement);
      const data = await api('POST', '/session', { token: token.value });
      token.value = '';
      $('sign-in-error').textContent = '';
      await signedIn(data);
    } catch (err) {
      $('sign-in-error').textContent = err instanceof ApiError && err.status === 401 ? t('wrongToken') : String(err instanceof Error ? err.message : err);
    }
  });
  $('sign-out').addEventListener('click', async () => {
    await api('DELETE', '/session').catch(() => undefined);
    signedOut();
  });
  window.addEventListener('hashchange', () => route());
  try {
    await signedIn(await api('GET', '/session'));
  } catch {
    signedOut();
  }
}

start();
