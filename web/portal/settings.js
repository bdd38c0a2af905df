// @ts-check
// Settings: the tenant's endpoints. Add one, change its URL, event types and enabled flag; its signing
// secret is shown once (when made and when rotated); a rotation keeps the old secret signing for 24
// hours, so every webhook carries both signatures while the merchant swaps; "Send test" sends a
// test.ping and links to its delivery.

import { api, canOperate, cell, el, formatTime, messageOf, t, word } from './lib.js';
import { loadEventTypes } from './event-types.js';

/** @typedef {{ id: string, url: string, description: string | null, event_types: string[], enabled: boolean, disabled_reason: string | null, next_probe_at?: string | null, slow?: { p90_ms: number } | null }} Endpoint */

/** The two-signature window of a rotation. */
const ROTATION_WINDOW = '24h';

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/** @param {string} secret */
function showSecret(secret) {
  byId('secret-value').textContent = secret;
  byId('secret-once').hidden = false;
}

/** @param {string | Node} text */
function say(text) {
  byId('settings-message').replaceChildren(text);
}

/** Runs a button's action; an API refusal is shown, not thrown. @param {() => Promise<void>} action */
async function act(action) {
  try {
    await action();
  } catch (err) {
    say(messageOf(err));
  }
}

/** @param {HTMLElement} section @param {Endpoint | null} endpoint the one edited, or null for a new one */
function openForm(section, endpoint) {
  const form = /** @type {HTMLFormElement} */ (byId('endpoint-form'));
  form.hidden = false;
  // A secret shown for the last action goes away with any other (it is shown once, then never).
  byId('secret-once').hidden = true;
  byId('secret-value').textContent = '';
  say('');
  byId('endpoint-form-title').textContent = endpoint ? `${t('edit')}: ${endpoint.url}` : t('newEndpoint');
  input('endpoint-url').value = endpoint?.url ?? '';
  input('endpoint-description').value = endpoint?.description ?? '';
  input('endpoint-event-types').value = (endpoint?.event_types ?? []).join(', ');
  syncChoices();
  input('endpoint-enabled').checked = endpoint?.enabled ?? true;
  form.onsubmit = (e) => {
    e.preventDefault();
    act(async () => {
      /** @type {{ url: string, description: string, event_types: string[], enabled?: boolean }} */
      const body = {
        url: input('endpoint-url').value.trim(),
        description: input('endpoint-description').value,
        event_types: input('endpoint-event-types')
          .value.split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      };
      // Sent only when it changes: enabling again also clears the endpoint's failure streak.
      const enabled = input('endpoint-enabled').checked;
      if (!endpoint || enabled !== endpoint.enabled) body.enabled = enabled;
      if (endpoint) {
        await api('PATCH', `/endpoints/${encodeURIComponent(endpoint.id)}`, body);
        await list(section);
      } else {
        const made = await api('POST', '/endpoints', body);
        await list(section);
        showSecret(made.secret);
      }
    });
  };
}

/** @param {HTMLElement} section @param {Endpoint} ep */
function actions(section, ep) {
  if (!canOperate()) return el('td');
  const id = encodeURIComponent(ep.id);
  /** @param {import('./lib.js').WordKey} key @param {() => Promise<void>} action */
  const button = (key, action) =>
    word('button', key, {
      type: 'button',
      className: `endpoint-${key}`,
      on: {
        click: (e) => {
          e.stopPropagation();
          act(action);
        },
      },
    });
  return el(
    'td',
    {},
    button('edit', async () => openForm(section, ep)),
    ' ',
    button('rotate', async () => {
      const r = await api('POST', `/endpoints/${id}/rotate-secret`, { window: ROTATION_WINDOW });
      showSecret(r.secret);
      say(t('rotated')(formatTime(r.previous_expires_at)));
    }),
    ' ',
    button('sendTest', async () => {
      const ping = await api('POST', `/endpoints/${id}/ping`);
      say(el('span', {}, t('testSent')(ping.id), ' ', word('a', 'viewTest', { id: 'test-link', href: `#/delivery/${encodeURIComponent(ping.id)}` })));
    }),
  );
}

/** @param {HTMLElement} section */
async function list(section) {
  /** @type {{ items: Endpoint[] }} */
  const { items } = await api('GET', '/endpoints');
  const form = document.getElementById('endpoint-form');
  if (form) form.hidden = true;
  byId('settings-message').replaceChildren();
  byId('secret-once').hidden = true;
  byId('secret-value').textContent = '';
  const body = byId('endpoints');
  body.replaceChildren(
    ...items.map((ep) =>
      el(
        'tr',
        { dataset: { endpoint: ep.id } },
        cell(ep.url, 'wrap'),
        cell(ep.description),
        cell(ep.event_types.length ? ep.event_types.join(', ') : '*'),
        el(
          'td',
          { className: ep.enabled ? 'status-succeeded' : 'status-failed' },
          word('span', ep.enabled ? 'enabled' : 'disabled'),
          ep.disabled_reason ? ` (${ep.disabled_reason})` : '',
          // The circuit breaker's state and its next probe, never a time in the past.
          ep.next_probe_at
            ? el(
                'div',
                { className: 'breaker' },
                `${String(t('breakerOpen'))} ${Date.parse(ep.next_probe_at) > Date.now() ? formatTime(ep.next_probe_at) : String(t('dueNow'))}`,
              )
            : '',
          // In the slow lane: its answers' recent p90, so the merchant sees why its webhooks queue.
          ep.slow ? el('div', { className: 'slow' }, String(t('slowLane')(ep.slow.p90_ms))) : '',
        ),
        actions(section, ep),
      ),
    ),
  );
  if (items.length === 0) body.append(el('tr', {}, word('td', 'noEndpoints', { colSpan: 5, className: 'empty' })));
}

/** @param {HTMLElement} section */
function views(section) {
  /** @param {import('./lib.js').WordKey} key @param {HTMLElement} field */
  const label = (key, field) => el('label', {}, word('span', key), ' ', field);
  return [
    el('h1', {}, word('span', 'endpoints')),
    el(
      'div',
      { className: 'toolbar' },
      canOperate()
        ? word('button', 'newEndpoint', { id: 'endpoint-new', type: 'button', className: 'primary', on: { click: () => openForm(section, null) } })
        : null,
    ),
    el('p', { id: 'settings-message', role: 'status' }),
    el('div', { id: 'secret-once', hidden: true }, word('p', 'secretOnce'), el('code', { id: 'secret-value' })),
    el(
      'table',
      { id: 'endpoints-table' },
      el('thead', {}, el('tr', {}, word('th', 'url'), word('th', 'description'), word('th', 'eventTypeList'), word('th', 'status'), el('th'))),
      el('tbody', { id: 'endpoints' }),
    ),
    // A viewer gets no form (and the API would refuse its changes anyway).
    canOperate() &&
      el(
        'form',
        { id: 'endpoint-form', hidden: true },
        el('h2', { id: 'endpoint-form-title' }),
        label('url', el('input', { id: 'endpoint-url', type: 'url', required: true, placeholder: 'https://' })),
        label('description', el('input', { id: 'endpoint-description', type: 'text' })),
        label(
          'eventTypes',
          el('input', { id: 'endpoint-event-types', type: 'text', placeholder: 'invoice.paid, invoice.refunded', on: { input: () => syncChoices() } }),
        ),
        el('fieldset', { id: 'endpoint-event-type-choices', hidden: true }, word('legend', 'chooseEventTypes')),
        el('label', {}, el('input', { id: 'endpoint-enabled', type: 'checkbox' }), ' ', word('span', 'enabled')),
        el(
          'div',
          { className: 'toolbar' },
          word('button', 'save', { type: 'submit', className: 'primary' }),
          word('button', 'cancel', { id: 'endpoint-cancel', type: 'button', on: { click: () => (byId('endpoint-form').hidden = true) } }),
        ),
      ),
  ];
}

/** The endpoint form's event types as a list. */
const typedTypes = () =>
  input('endpoint-event-types')
    .value.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Each catalogue type as a checkbox; checking one adds it to the endpoint's list (patterns typed there stay). @param {string[]} names */
function buildChoices(names) {
  const box = document.getElementById('endpoint-event-type-choices');
  if (!box) return;
  box.hidden = names.length === 0;
  box.replaceChildren(
    word('legend', 'chooseEventTypes'),
    ...names.map((name) =>
      el(
        'label',
        { className: 'choice' },
        el('input', {
          type: 'checkbox',
          value: name,
          on: {
            change: (e) => {
              const box = /** @type {HTMLInputElement} */ (e.target);
              const rest = typedTypes().filter((x) => x !== name);
              input('endpoint-event-types').value = (box.checked ? [...rest, name] : rest).join(', ');
            },
          },
        }),
        ' ',
        el('code', {}, name),
      ),
    ),
  );
  syncChoices();
}

/** The checkboxes follow what the text field lists. */
function syncChoices() {
  const chosen = new Set(typedTypes());
  for (const box of document.querySelectorAll('#endpoint-event-type-choices input')) {
    const choice = /** @type {HTMLInputElement} */ (box);
    choice.checked = chosen.has(choice.value);
  }
}

/** @type {import('./lib.js').Page} */
export const settingsPage = {
  id: 'settings',
  nav: 'settings',
  async show(section) {
    section.replaceChildren(...views(section).filter((node) => node !== false));
    await list(section);
    // The provider's catalogue, when it has one: types are picked instead of typed.
    if (canOperate()) buildChoices((await loadEventTypes()).filter((type) => !type.deprecated).map((type) => type.name));
  },
};
