// @ts-check
// The Outbound page: endpoints with their health, create / edit / enable / disable, rotate a secret
// (shown once), send a test.ping and watch its attempt, message history with every attempt, replay
// one message or every failed delivery of a time window. Everything goes through the admin API; text
// from the store is only ever set as textContent. A viewer gets no button that changes anything (and
// the API would refuse it anyway).

import { $, api, canOperate, cell, el, formatTime, pageLink, statusCell, wordsOf } from './lib.js';
import { fromLocalInput, toLocalInput } from './widgets.js';
import { messageDetail } from './outbound-message.js';
import { outboundViews } from './outbound-views.js';

/** @typedef {import('./api-types').ApiBody<'POST /endpoints'>} EndpointInput */
/**
 * An endpoint (GET /endpoints/{id}).
 * @typedef {{ id: string, kind: string, url: string, description: string | null, event_types: string[], scheme: string, enabled: boolean, disabled_reason: string | null, consecutive_failures: number, slow: { p90_ms: number } | null, tenant_id: string, created_at: string }} Endpoint
 */
/**
 * An endpoint's health over the last hour (GET /stats/outbox).
 * @typedef {{ endpoint_id: string, attempts: number, succeeded: number, success_rate: number | null, p50_ms: number | null, p99_ms: number | null, failing_since: string | null }} EndpointHealth
 */
/**
 * A row of an endpoint's message history (GET /deliveries).
 * @typedef {{ message_id: string, event_type: string, status: string, attempts: number, created_at: string, last_status_code: number | null, last_duration_ms: number | null, last_error: string | null }} DeliveryRow
 */

const words = wordsOf('outbound');
const { t } = words;
const enc = encodeURIComponent;

/** @param {number | null | undefined} rate */
const percent = (rate) => (rate == null ? '–' : `${(rate * 100).toFixed(rate === 1 ? 0 : 1)}%`);
/** @param {number | null | undefined} v */
const ms = (v) => (v == null ? '–' : String(Math.round(v)));
/** @param {Endpoint} ep */
// An endpoint in the slow lane says so with its recent p90 (docs/sending.md, "Slow endpoints").
const stateOf = (ep) =>
  `${ep.enabled ? t('enabled') : `${t('disabled')}${ep.disabled_reason ? ` (${ep.disabled_reason})` : ''}`}${ep.slow ? `; ${t('slowLane')(ep.slow.p90_ms)}` : ''}`;
/** @param {unknown} err */
const messageOf = (err) => (err instanceof Error ? err.message : String(err));

/** @type {Endpoint | null} the endpoint whose detail is open */
let current = null;
/** Bumps to stop an older watch loop of a message (and, on leaving the page, every one). */
let watching = 0;
// Bumps with every change of view: a list or endpoint still loading when the operator has moved on
// (clicked "New endpoint" before the list arrived) is dropped instead of taking the screen back.
let navigation = 0;

/** Loads in flight: while there is one, the page is `aria-busy` (a list or endpoint dropped as stale ends its load too). */
let loading = 0;
/**
 * Marks the page busy until the load has been shown or dropped: call the answer when it has.
 * @returns {() => void}
 */
function busy() {
  const page = $('outbound');
  loading++;
  page.setAttribute('aria-busy', 'true');
  return () => {
    if (--loading === 0) page.removeAttribute('aria-busy');
  };
}

/** One view of the page at a time; the secret box goes away with any other view. @param {'list' | 'form' | 'detail'} name */
function view(name) {
  $('outbound-list').hidden = name !== 'list';
  $('endpoint-form').hidden = name !== 'form';
  $('endpoint-detail').hidden = name !== 'detail';
  $('secret-once').hidden = true;
  $('secret-value').textContent = '';
}

/**
 * Keeps the address on what is shown (`#/outbound/<endpoint>/<message>`), so a view can be bookmarked,
 * shared and reloaded. Set without a hashchange: the page is already showing it.
 * @param {string[]} args
 */
function address(args) {
  const hash = pageLink('outbound', args);
  if (location.hash !== hash) history.pushState(null, '', hash);
}

/** @param {string} secret */
function showSecret(secret) {
  $('secret-value').textContent = secret;
  $('secret-once').hidden = false;
}

async function openList() {
  const done = busy();
  try {
    address([]);
    await showList();
  } finally {
    done();
  }
}

async function showList() {
  const nav = ++navigation;
  watching++;
  current = null;
  /** @type {[{ items: Endpoint[] }, { endpoints: EndpointHealth[] }]} */
  const [{ items }, stats] = await Promise.all([api('GET', '/endpoints'), api('GET', '/stats/outbox?window=1h')]);
  if (nav !== navigation) return;
  const health = new Map(stats.endpoints.map((e) => [e.endpoint_id, e]));
  const select = $('replay-failed-endpoint', HTMLSelectElement);
  select.replaceChildren(/** @type {HTMLOptionElement} */ (select.options[0]));
  $('endpoint-rows').replaceChildren(
    ...items.map((ep) => {
      const h = health.get(ep.id);
      select.append(new Option(ep.id, ep.id));
      return el(
        'tr',
        { dataset: { endpoint: ep.id }, on: { click: () => openEndpoint(ep.id) } },
        cell(ep.id),
        cell(ep.tenant_id),
        cell(ep.url),
        cell(stateOf(ep), ep.enabled ? '' : 'status-dead'),
        cell(h ? `${percent(h.success_rate)} (${h.succeeded}/${h.attempts})` : '–', h?.failing_since ? 'status-dead' : ''),
        cell(h ? `${ms(h.p50_ms)} / ${ms(h.p99_ms)}` : '–'),
        cell(formatTime(h?.failing_since), 'status-dead'),
        cell(String(ep.consecutive_failures)),
      );
    }),
  );
  const now = Date.now();
  $('replay-failed-since', HTMLInputElement).value = toLocalInput(new Date(now - 3_600_000));
  $('replay-failed-until', HTMLInputElement).value = toLocalInput(new Date(now + 60_000));
  $('replay-failed-message').textContent = '';
  view('list');
}

/** @param {Endpoint | null} endpoint the one edited, or null for a new one */
function openForm(endpoint) {
  navigation++;
  view('form');
  $('endpoint-form-title').textContent = endpoint ? `${t('edit')} ${endpoint.id}` : t('newEndpoint');
  $('endpoint-url', HTMLInputElement).value = endpoint?.url ?? '';
  $('endpoint-description', HTMLInputElement).value = endpoint?.description ?? '';
  $('endpoint-event-types', HTMLInputElement).value = (endpoint?.event_types ?? []).join(', ');
  $('endpoint-enabled', HTMLInputElement).checked = endpoint?.enabled ?? true;
  $('endpoint-form-error').textContent = '';
  $('endpoint-form', HTMLFormElement).onsubmit = async (e) => {
    e.preventDefault();
    /** @type {EndpointInput} */
    const input = {
      url: $('endpoint-url', HTMLInputElement).value.trim(),
      description: $('endpoint-description', HTMLInputElement).value,
      event_types: $('endpoint-event-types', HTMLInputElement)
        .value.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    };
    // Sent only when it changes: enabling again also clears the endpoint's failure streak.
    const enabled = $('endpoint-enabled', HTMLInputElement).checked;
    if (!endpoint || enabled !== endpoint.enabled) input.enabled = enabled;
    try {
      if (endpoint) {
        await api('PATCH', `/endpoints/${enc(endpoint.id)}`, input);
        await openEndpoint(endpoint.id);
      } else {
        const created = await api('POST', '/endpoints', input);
        await openEndpoint(created.id, created.secret);
      }
    } catch (err) {
      $('endpoint-form-error').textContent = messageOf(err);
    }
  };
  $('endpoint-cancel').onclick = () => (endpoint ? openEndpoint(endpoint.id) : openList());
}

/**
 * @param {'tenant' | 'url' | 'kind' | 'description' | 'eventTypeList' | 'scheme' | 'state' | 'failedInRow' | 'created'} key
 * @param {string | null} value
 */
const field = (key, value) => [words.word('dt', key), el('dd', { dataset: { field: key } }, value ?? '')];

/**
 * @param {string} id
 * @param {string} [secret] a new endpoint's, shown with its detail this once
 */
async function openEndpoint(id, secret) {
  const done = busy();
  try {
    address([id]);
    await showEndpoint(id, secret);
  } finally {
    done();
  }
}

/**
 * @param {string} id
 * @param {string} [secret]
 */
async function showEndpoint(id, secret) {
  const nav = ++navigation;
  watching++;
  /** @type {Endpoint} */
  const ep = await api('GET', `/endpoints/${enc(id)}`);
  if (nav !== navigation) return;
  current = ep;
  view('detail');
  if (secret) showSecret(secret);
  $('endpoint-title').textContent = ep.id;
  $('endpoint-fields').replaceChildren(
    ...field('tenant', ep.tenant_id),
    ...field('url', ep.url),
    ...field('kind', ep.kind),
    ...field('description', ep.description),
    ...field('eventTypeList', ep.event_types.length ? ep.event_types.join(', ') : '*'),
    ...field('scheme', ep.scheme),
    ...field('state', stateOf(ep)),
    ...field('failedInRow', String(ep.consecutive_failures)),
    ...field('created', formatTime(ep.created_at)),
  );
  const toggle = $('endpoint-toggle');
  toggle.textContent = ep.enabled ? t('disable') : t('enable');
  toggle.onclick = () =>
    act(async () => {
      await api('POST', `/endpoints/${enc(ep.id)}/${ep.enabled ? 'disable' : 'enable'}`);
      await openEndpoint(ep.id);
    });
  // This endpoint's deliveries only; the link carries the filter, the cookie the session.
  for (const format of ['csv', 'xlsx', 'pdf'])
    $(`endpoint-export-${format}`, HTMLAnchorElement).href = `/api/v1/deliveries/export.${format}?endpoint_id=${enc(ep.id)}`;
  $('endpoint-edit').onclick = () => openForm(ep);
  $('endpoint-rotate').onclick = () =>
    act(async () => {
      const rotated = await api('POST', `/endpoints/${enc(ep.id)}/rotate-secret`, {});
      showSecret(rotated.secret);
      $('endpoint-message').textContent = t('rotated')(formatTime(rotated.previous_expires_at));
    });
  $('endpoint-ping').onclick = () =>
    act(async () => {
      const ping = await api('POST', `/endpoints/${enc(ep.id)}/ping`);
      $('endpoint-message').textContent = t('pingSent')(ping.id);
      await openMessage(ping.id, true);
    });
  $('endpoint-message').textContent = '';
  $('message-detail').hidden = true;
  await loadHistory();
}

/** Runs a button's action; an API refusal is shown, not thrown. @param {() => Promise<void>} action */
async function act(action) {
  try {
    await action();
  } catch (err) {
    $('endpoint-message').textContent = messageOf(err);
  }
}

const showMessage = messageDetail({
  endpointId: () => current?.id,
  watch: () => ++watching,
  watched: (run) => run === watching,
  act,
  loadHistory,
});

/** @param {string} messageId @param {boolean} watch */
async function openMessage(messageId, watch) {
  if (current) address([current.id, messageId]);
  await showMessage(messageId, watch);
}

async function loadHistory() {
  if (!current) return;
  /** @type {{ items: DeliveryRow[] }} */
  const page = await api('GET', `/deliveries?endpoint_id=${enc(current.id)}&limit=50`);
  $('endpoint-history').replaceChildren(
    ...page.items.map((d) =>
      el(
        'tr',
        { dataset: { message: d.message_id }, on: { click: () => openMessage(d.message_id, false) } },
        cell(formatTime(d.created_at)),
        cell(d.message_id),
        cell(d.event_type),
        statusCell(d.status, `status-${d.status}`),
        cell(String(d.attempts)),
        cell(d.last_status_code == null ? '' : String(d.last_status_code)),
        cell(d.last_duration_ms == null ? '' : String(d.last_duration_ms)),
        cell(d.last_error),
      ),
    ),
  );
}

/** @param {Event} e */
async function replayFailed(e) {
  e.preventDefault();
  const endpointId = $('replay-failed-endpoint', HTMLSelectElement).value;
  try {
    /** @type {import('./api-types').ApiBody<'POST /deliveries/replay-failed'>} */
    const body = {
      ...(endpointId ? { endpoint_id: endpointId } : {}),
      since: fromLocalInput($('replay-failed-since', HTMLInputElement).value),
      until: fromLocalInput($('replay-failed-until', HTMLInputElement).value),
    };
    const r = await api('POST', '/deliveries/replay-failed', body);
    $('replay-failed-message').textContent = t('failedReplayed')(r.replayed);
  } catch (err) {
    $('replay-failed-message').textContent = messageOf(err);
  }
}

/** @type {import('./lib.js').Page} */
export const outboundPage = {
  id: 'outbound',
  nav: 'outbound',
  words: 'outbound',
  async show(section, args) {
    // Built again at each visit, so what it offers follows the signed-in role.
    section.replaceChildren(
      outboundViews(words, canOperate(), {
        newEndpoint: () => openForm(null),
        back: () => openList(),
        replayFailed,
      }),
    );
    // `#/outbound/<endpoint>[/<message>]`: a bookmarked endpoint, or one message's attempts to it.
    const [endpointId, messageId] = args;
    if (!endpointId) return openList();
    await openEndpoint(endpointId);
    if (messageId && current?.id === endpointId) await openMessage(messageId, false);
  },
  leave() {
    // A list, endpoint or watch still loading is dropped.
    navigation++;
    watching++;
  },
};
