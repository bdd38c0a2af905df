// tekil's panel: sign-in, a live Inbound table, a delivery's detail with replay. Plain DOM, no
// framework, nothing from elsewhere. Text from deliveries is only ever set as textContent, never as HTML.
// The session lives in an HttpOnly cookie; the CSRF token is kept in memory only.

import { browserLanguage, messages } from './i18n.js';

const $ = (id) => document.getElementById(id);
let lang = browserLanguage();
const t = (key) => messages[lang][key];

/** Puts the chosen language's words into every marked element (text only, never markup). */
function translate() {
  document.documentElement.lang = lang;
  $('lang').value = lang;
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
}
let csrfToken = null;
let role = null;
let events = null;
/** Rows of the Inbound table by "source/event_id". */
const rows = new Map();

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-tekil-csrf'] = csrfToken;
  const res = await fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const data = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  if (!res.ok) throw Object.assign(new Error(data?.message ?? `HTTP ${res.status}`), { status: res.status, code: data?.error });
  return data;
}

function show(section) {
  for (const id of ['sign-in', 'inbound', 'detail']) $(id).hidden = id !== section;
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text ?? '';
  if (className) td.className = className;
  return td;
}

function renderRow(item) {
  const key = `${item.source}/${item.event_id}`;
  const tr = rows.get(key) ?? document.createElement('tr');
  tr.replaceChildren(
    cell(new Date(item.received_at).toLocaleString()),
    cell(item.source),
    cell(item.event_id),
    cell(item.event_type),
    cell(item.status, `status-${item.status}`),
    cell(String(item.attempts)),
  );
  tr.dataset.key = key;
  tr.dataset.status = item.status;
  tr.onclick = () => openDetail(item.source, item.event_id);
  if (!rows.has(key)) {
    rows.set(key, tr);
    return tr;
  }
  return null;
}

async function loadInbound() {
  const page = await api('GET', '/inbox?limit=100');
  const body = $('rows');
  body.replaceChildren();
  rows.clear();
  for (const item of page.items) body.append(renderRow(item));
}

function startLive() {
  events?.close();
  events = new EventSource('/api/v1/events');
  events.onopen = () => $('live').classList.add('on');
  events.onerror = () => $('live').classList.remove('on');
  events.addEventListener('delivery', (e) => {
    const item = JSON.parse(e.data);
    const added = renderRow(item);
    if (added) $('rows').prepend(added);
  });
}

async function openDetail(source, eventId) {
  const d = await api('GET', `/inbox/${encodeURIComponent(source)}/${encodeURIComponent(eventId)}`);
  $('detail-title').textContent = `${d.source} / ${d.event_id}`;
  const fields = $('detail-fields');
  fields.replaceChildren();
  for (const [field, value] of [['status', d.status], ['type', d.event_type], ['resource', d.resource_id], ['attempts', d.attempts], ['received', d.received_at], ['lastError', d.last_error]]) {
    const dt = document.createElement('dt');
    dt.dataset.i18n = field;
    dt.textContent = t(field);
    const dd = document.createElement('dd');
    dd.textContent = value ?? '';
    dd.dataset.field = field;
    fields.append(dt, dd);
  }
  let body = d.body;
  if (d.body_trimmed_at) body = t('bodyTrimmed')(d.body_trimmed_at);
  else if (d.body_encoding === 'utf8') {
    try { body = JSON.stringify(JSON.parse(d.body), null, 2); } catch { /* not JSON: shown as received */ }
  }
  $('detail-body').textContent = body;
  // tekil stores only the headers it keeps (no signatures or secrets); shown as text, one a line.
  $('detail-headers').textContent = Object.entries(d.headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n');
  const attempts = $('attempts');
  attempts.replaceChildren();
  for (const a of d.attempt_history ?? []) {
    const tr = document.createElement('tr');
    tr.append(cell(String(a.attempt)), cell(a.started_at), cell(a.outcome), cell(a.duration_ms == null ? '' : String(a.duration_ms)), cell(a.error));
    attempts.append(tr);
  }
  // A viewer has no replay button (and the API would refuse it anyway).
  const replay = $('replay');
  // A trimmed body has nothing left to replay (the API answers BODY_TRIMMED).
  replay.hidden = role === 'viewer' || Boolean(d.body_trimmed_at) || !['dead', 'done', 'stale'].includes(d.status);
  replay.onclick = async () => {
    try {
      const r = await api('POST', `/inbox/${encodeURIComponent(d.source)}/${encodeURIComponent(d.event_id)}/replay`, { force: d.status === 'done' });
      await openDetail(d.source, d.event_id);
      $('detail-message').textContent = t('replayed')(r.status);
    } catch (err) {
      $('detail-message').textContent = t('replayRefused')(err.message);
    }
  };
  const discard = $('discard');
  discard.hidden = role === 'viewer' || !['dead', 'stale', 'pending'].includes(d.status);
  discard.onclick = async () => {
    try {
      await api('POST', `/inbox/${encodeURIComponent(d.source)}/${encodeURIComponent(d.event_id)}/discard`);
      await openDetail(d.source, d.event_id);
      $('detail-message').textContent = t('discarded');
    } catch (err) {
      $('detail-message').textContent = err.message;
    }
  };
  $('detail-message').textContent = '';
  show('detail');
}

async function signedIn(session) {
  csrfToken = session.csrf_token;
  role = session.role;
  $('who').textContent = `${session.name} (${session.role})`;
  $('sign-out').hidden = false;
  await loadInbound();
  startLive();
  show('inbound');
}

async function start() {
  translate();
  $('lang').addEventListener('change', () => {
    lang = $('lang').value === 'tr' ? 'tr' : 'en';
    translate();
  });
  $('sign-in').addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const session = await api('POST', '/session', { token: $('token').value });
      $('token').value = '';
      $('sign-in-error').textContent = '';
      await signedIn(session);
    } catch (err) {
      $('sign-in-error').textContent = err.status === 401 ? t('wrongToken') : err.message;
    }
  });
  $('sign-out').addEventListener('click', async () => {
    await api('DELETE', '/session').catch(() => undefined);
    events?.close();
    csrfToken = null;
    $('who').textContent = '';
    $('sign-out').hidden = true;
    show('sign-in');
  });
  $('back').addEventListener('click', async () => {
    await loadInbound();
    show('inbound');
  });
  try {
    await signedIn(await api('GET', '/session'));
  } catch {
    show('sign-in');
  }
}

start();
