// Shared by every page of the panel: the API client, the session's role, the words, and small DOM
// helpers. Text from deliveries is only ever set as textContent, never as HTML.

import { browserLanguage, messages } from './i18n.js';

/** The signed-in caller; the CSRF token is kept in memory only (never in storage). */
export const session = { csrfToken: null, role: null, name: null };

let lang = browserLanguage();
export const language = () => lang;
export function setLanguage(next) {
  lang = next === 'tr' ? 'tr' : 'en';
}
/** A word of the panel in the chosen language (a function for words with a value in them). */
export const t = (key) => messages[lang][key] ?? messages.en[key] ?? key;

/** Adds a page's own words (`{ en: {…}, tr: {…} }`) to the shared ones. */
export function addMessages(words) {
  for (const l of Object.keys(words)) Object.assign(messages[l], words[l]);
}

export const $ = (id) => document.getElementById(id);

/** Puts the chosen language's words into every marked element (text only, never markup). */
export function translate(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
}

export class ApiError extends Error {
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the admin API with the session cookie; a change carries the CSRF header. */
export async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && session.csrfToken) headers['x-tekil-csrf'] = session.csrfToken;
  const res = await fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const data = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  if (!res.ok) throw new ApiError(data?.message ?? `HTTP ${res.status}`, res.status, data?.error);
  return data;
}

/** Whether the caller may change things (replay, discard, jobs): a viewer may not. */
export const canOperate = () => session.role !== null && session.role !== 'viewer';

/**
 * Makes an element: `el('button', { type: 'button', dataset: { i18n: 'replay' } }, 'Replay')`.
 * Children are nodes or text (text is always a text node).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'on') for (const [event, fn] of Object.entries(value)) node.addEventListener(event, fn);
    else if (key in node && key !== 'list') node[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
  return node;
}

/** An element whose text is a word of the panel, kept in the chosen language by translate(). */
export const word = (tag, key, props = {}) => el(tag, { ...props, dataset: { ...(props.dataset ?? {}), i18n: key } }, t(key));

export function cell(text, className) {
  return el('td', { className }, text ?? '');
}

export const formatTime = (value) => (value ? new Date(value).toLocaleString(lang === 'tr' ? 'tr-TR' : 'en-GB') : '');

/**
 * A table: `columns` are `{ key, label (word key), value(row) → text, className?(row) }`. Returns the
 * table and a `render(rows, rowProps?)` that replaces its body.
 */
export function table(columns, options = {}) {
  const body = el('tbody', { id: options.bodyId });
  const head = el('thead', {}, el('tr', {}, columns.map((c) => (c.label ? word('th', c.label) : el('th', {}, c.text ?? '')))));
  const node = el('table', { id: options.id }, head, body);
  const row = (item) => {
    const tr = el('tr', options.rowProps?.(item) ?? {});
    for (const c of columns) tr.append(c.cell ? el('td', {}, c.cell(item)) : cell(c.value(item), c.className?.(item)));
    return tr;
  };
  return {
    node,
    body,
    row,
    render(items) {
      body.replaceChildren(...items.map(row));
      if (items.length === 0 && options.empty) body.append(el('tr', {}, el('td', { colSpan: columns.length, className: 'empty', dataset: { i18n: options.empty } }, t(options.empty))));
    },
  };
}

/** Asks before a change; resolves true when confirmed. One dialog element, reused. */
export function confirmDialog(message) {
  let dialog = $('confirm');
  if (!dialog) {
    dialog = el(
      'dialog',
      { id: 'confirm' },
      el('form', { method: 'dialog' }, el('p', { id: 'confirm-text' }), el('menu', {}, word('button', 'cancel', { value: 'cancel', id: 'confirm-cancel' }), word('button', 'confirm', { value: 'ok', id: 'confirm-ok' }))),
    );
    document.body.append(dialog);
  }
  $('confirm-text').textContent = message;
  translate(dialog);
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }));
}

/** The filter fields with a value, as a query string (no token or secret is ever part of it). */
export function queryString(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A link inside the panel: `#/page/arg…?query` (the router reads location.hash). */
export function pageLink(page, args = [], query = {}) {
  return `#/${[page, ...args].map(encodeURIComponent).join('/')}${queryString(query)}`;
}

/** ISO time → the value of a `datetime-local` input (the browser's time zone), and back. */
const toLocalInput = (iso) => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value) => (value ? new Date(value).toISOString() : '');

/**
 * A filter form: `fields` are `{ name, label, type: 'text' | 'number' | 'time' | 'select', options? }`;
 * `values` the current filter (by API parameter name). `onApply(filter)` gets the filled-in fields.
 */
export function filterForm(id, fields, values, onApply) {
  const inputs = fields.map((f) => {
    const props = { name: f.name, id: `${id}-${f.name}` };
    let input;
    if (f.type === 'select') {
      input = el('select', props, el('option', { value: '' }, '—'), f.options.map((o) => el('option', { value: o }, o)));
      input.value = values[f.name] ?? '';
    } else if (f.type === 'time') {
      input = el('input', { ...props, type: 'datetime-local', value: values[f.name] ? toLocalInput(values[f.name]) : '' });
    } else {
      input = el('input', { ...props, type: f.type === 'number' ? 'number' : 'text', min: f.type === 'number' ? '0' : undefined, value: values[f.name] ?? '' });
    }
    return { f, input, label: el('label', {}, word('span', f.label), input) };
  });
  const form = el(
    'form',
    { id, className: 'filters' },
    inputs.map((i) => i.label),
    word('button', 'apply', { type: 'submit' }),
    word('button', 'clear', { type: 'button', id: `${id}-clear`, on: { click: () => onApply({}) } }),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const filter = {};
    for (const { f, input } of inputs) {
      const value = f.type === 'time' ? fromLocalInput(input.value) : input.value.trim();
      if (value !== '') filter[f.name] = value;
    }
    onApply(filter);
  });
  return form;
}

/** Keeps only the keys the API accepts as a filter. */
export const pick = (query, names) => Object.fromEntries(names.filter((n) => query[n] !== undefined && query[n] !== '').map((n) => [n, query[n]]));

/** Goes to a page of the panel; the same address again reloads it (a hash that does not change fires nothing). */
export function navigate(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}
