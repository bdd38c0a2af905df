// tekil's panel, the shell: sign-in and sign-out, the navigation, the router (by location.hash) and the
// language switch. Each page is its own module; the session lives in an HttpOnly cookie and the CSRF
// token in memory only.

import { $, api, session, setLanguage, language, translate, t } from './lib.js';
import { inboundPage } from './inbound.js';
import { deliveryPage } from './delivery.js';
import { reviewPage } from './review.js';
import { timelinePage } from './timeline.js';
import { mountOutbound } from './outbound.js';
import { mountOverview } from './overview.js';
import { outboundWords } from './words-outbound.js';
import { addMessages } from './lib.js';

addMessages(outboundWords);

/**
 * A page whose markup is in index.html (`<section id=…>`) and whose module mounts onto it:
 * mounted again at each sign-in, so what it shows follows the signed-in role.
 */
function mountedPage(id, nav, mount) {
  let mounted = null;
  return {
    id,
    nav,
    sectionId: id,
    async show(section) {
      mounted ??= mount(section, { api, t, role: session.role });
      await mounted.open();
    },
    leave() {
      mounted?.close?.();
    },
    reset() {
      mounted?.close?.();
      mounted = null;
    },
  };
}

/**
 * The pages, by the first part of the hash (`#/inbound?…`, `#/delivery/shop/evt_1`). A page has
 * `show(section, args, query)` and may have `leave()`; `nav` names its entry in the header.
 */
const pages = [
  // Inbound side
  inboundPage,
  deliveryPage,
  reviewPage,
  timelinePage,
  // Outbound side
  mountedPage('outbound', 'outbound', mountOutbound),
  mountedPage('overview', 'overview', mountOverview),
];
const DEFAULT_PAGE = 'inbound';

let current = null;

function parseHash() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [id = '', ...args] = path.split('/').map(decodeURIComponent);
  return { id: id || DEFAULT_PAGE, args, query: Object.fromEntries(new URLSearchParams(query)) };
}

function sectionOf(page) {
  let section = $(page.sectionId ?? `page-${page.id}`);
  if (!section) {
    section = document.createElement('section');
    section.id = `page-${page.id}`;
    section.className = 'page';
    $('pages').append(section);
  }
  return section;
}

async function route() {
  if (!session.role) return;
  const { id, args, query } = parseHash();
  const page = pages.find((p) => p.id === id) ?? pages.find((p) => p.id === DEFAULT_PAGE);
  if (current && current !== page) current.leave?.();
  current = page;
  for (const p of pages) sectionOf(p).hidden = p !== page;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.page === (page.navAs ?? page.id));
  $('sign-in').hidden = true;
  sectionOf(page).querySelector(':scope > .page-error')?.remove();
  try {
    await page.show(sectionOf(page), args, query);
  } catch (err) {
    const message = Object.assign(document.createElement('p'), { className: 'error page-error', textContent: err.message });
    // A page whose markup is in index.html keeps it (it mounts onto it again): the error goes above it.
    if (page.sectionId) {
      sectionOf(page).prepend(message);
    } else sectionOf(page).replaceChildren(message);
  }
  translate(sectionOf(page));
}

function buildNav() {
  const nav = $('nav');
  nav.replaceChildren();
  for (const page of pages.filter((p) => p.nav)) {
    const a = document.createElement('a');
    a.href = `#/${page.id}`;
    a.dataset.page = page.id;
    a.dataset.i18n = page.nav;
    a.textContent = t(page.nav);
    nav.append(a);
  }
}

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
  for (const p of pages) p.reset?.();
  Object.assign(session, { csrfToken: null, role: null, name: null });
  $('who').textContent = '';
  $('sign-out').hidden = true;
  $('nav').hidden = true;
  for (const p of pages) sectionOf(p).hidden = true;
  $('sign-in').hidden = false;
}

async function start() {
  document.documentElement.lang = language();
  $('lang').value = language();
  buildNav();
  translate();
  $('lang').addEventListener('change', () => {
    setLanguage($('lang').value);
    document.documentElement.lang = language();
    translate();
    current?.relabel?.();
  });
  $('sign-in').addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const data = await api('POST', '/session', { token: $('token').value });
      $('token').value = '';
      $('sign-in-error').textContent = '';
      await signedIn(data);
    } catch (err) {
      $('sign-in-error').textContent = err.status === 401 ? t('wrongToken') : err.message;
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
