// @ts-check
// Shared by every page of the panel: the API client, the session's role, the words, and small DOM
// helpers. Text from deliveries is only ever set as textContent, never as HTML.

import { el, request } from './dom.js';
import { browserLanguage, words } from './i18n.js';
import { formatTime as writeTime } from './dates.js';

export { ApiError, el } from './dom.js';
/** @typedef {import('./dom.js').Props} Props */
/** @typedef {import('./dom.js').Child} Child */

/** @typedef {import('./api-types').ApiMethod} ApiMethod */
/** @typedef {import('./api-types').ApiPath} ApiPath */
/** @typedef {keyof typeof words} Namespace */
/** @typedef {string | ((...args: never[]) => string)} Word */

/** The signed-in caller; the CSRF token is kept in memory only (never in storage). */
export const session = {
  /** @type {string | null} */ csrfToken: null,
  /** @type {'admin' | 'operator' | 'viewer' | null} */ role: null,
  /** @type {string | null} */ name: null,
};

/** @type {'en' | 'tr'} */
let lang = browserLanguage();
export const language = () => lang;
/** @param {string} next */
export function setLanguage(next) {
  lang = next === 'tr' ? 'tr' : 'en';
}

/**
 * A word of a namespace in the chosen language: the namespace's own, else a common one (a test keeps
 * the two apart), else the English, else the key.
 * @param {Namespace} namespace
 * @param {string} key
 * @returns {Word}
 */
function lookup(namespace, key) {
  /** @type {(table: { en: object, tr: object }, l: 'en' | 'tr') => Record<string, Word | undefined>} */
  const of = (table, l) => /** @type {Record<string, Word | undefined>} */ (table[l]);
  return of(words[namespace], lang)[key] ?? of(words.common, lang)[key] ?? of(words[namespace], 'en')[key] ?? of(words.common, 'en')[key] ?? key;
}

/**
 * A page's words: `t(key)` and `word(tag, key)` read the page's namespace (then `common`). An element
 * made by `word` is kept in the chosen language by translate(), which finds its namespace from the
 * closest `data-words` (the page's section carries it).
 * @template {Namespace} N
 * @param {N} namespace
 */
export function wordsOf(namespace) {
  /**
   * @template {Extract<keyof ((typeof words)[N]['en'] & (typeof words)['common']['en']), string>} K
   * @param {K} key
   * @returns {((typeof words)[N]['en'] & (typeof words)['common']['en'])[K]}
   */
  const t = (key) => /** @type {never} */ (lookup(namespace, key));
  /**
   * An element whose text is a word of the page.
   * @template {keyof HTMLElementTagNameMap} T
   * @param {T} tag
   * @param {Extract<keyof ((typeof words)[N]['en'] & (typeof words)['common']['en']), string>} key
   * @param {Props} [props]
   */
  const word = (tag, key, props = {}) => el(tag, { ...props, dataset: { ...(props.dataset ?? {}), i18n: key } }, String(lookup(namespace, key)));
  return { namespace, t, word };
}

/**
 * A page of the panel, by the first part of the hash (`#/inbound?…`, `#/delivery/shop/evt_1`): it
 * builds its own DOM into its section (which carries `data-words`, its namespace), and stops what it
 * runs (streams, timers) when left. `nav` names its entry in the header; `navAs` the entry it belongs to.
 * @typedef {{
 *   id: string,
 *   nav?: Extract<keyof (typeof words)['common']['en'], string>,
 *   navAs?: string,
 *   words: Namespace,
 *   show(section: HTMLElement, args: string[], query: Record<string, string>): Promise<void>,
 *   leave?(): void,
 *   relabel?(): void,
 * }} Page
 */

/** The shell's words (sign-in, the navigation, the shared controls). */
export const common = wordsOf('common');

/**
 * The element with this id, which the page has made: a missing one is the page's bug, and throws. The
 * caller names what kind it is when it needs more than an HTMLElement: `$('token', HTMLInputElement)`.
 * @template {HTMLElement} [E=HTMLElement]
 * @param {string} id
 * @param {new () => E} [kind]
 * @returns {E}
 */
export const $ = (id, kind) => {
  const found = document.getElementById(id);
  if (!found) throw new Error(`#${id} is missing`);
  if (kind && !(found instanceof kind)) throw new Error(`#${id} is not a ${kind.name}`);
  return /** @type {E} */ (found);
};

/**
 * The element with this id if it is there (one a page may have left or not made yet).
 * @param {string} id
 */
export const find = (id) => document.getElementById(id);

/** @param {Element} node */
const namespaceOf = (node) => /** @type {Namespace} */ (node.closest('[data-words]')?.getAttribute('data-words') ?? 'common');

/**
 * Puts the chosen language's words into every marked element (text only, never markup), each from
 * the namespace of the page it is on.
 * @param {ParentNode} [root]
 */
export function translate(root = document) {
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = String(lookup(namespaceOf(node), node.getAttribute('data-i18n') ?? ''));
  for (const node of root.querySelectorAll('[data-i18n-title]')) {
    /** @type {HTMLElement} */ (node).title = String(lookup(namespaceOf(node), node.getAttribute('data-i18n-title') ?? ''));
  }
  for (const node of root.querySelectorAll('[data-i18n-placeholder]')) {
    /** @type {HTMLInputElement} */ (node).placeholder = String(lookup(namespaceOf(node), node.getAttribute('data-i18n-placeholder') ?? ''));
  }
}

/**
 * Calls the admin API with the session cookie (dom.js's request). `path` is one of the API's paths
 * (api-types.d.ts, generated from its OpenAPI document); `body` is typed at the call with
 * `ApiBody<'POST /endpoints'>`. The document describes no answers yet, so the answer is `any`.
 * @param {ApiMethod} method
 * @param {ApiPath} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
// Refusals come back in the page's language (Accept-Language, src/errors-tr.ts).
export const api = (method, path, body) => request(method, path, body, session.csrfToken, { 'accept-language': lang });

/** Whether the caller may change things (replay, discard, jobs): a viewer may not. */
export const canOperate = () => session.role !== null && session.role !== 'viewer';

/**
 * An element whose text is a word of a namespace, kept in the chosen language by translate().
 * @template {keyof HTMLElementTagNameMap} T
 * @param {Namespace} namespace
 * @param {T} tag
 * @param {string} key
 * @param {Props} [props]
 */
export const wordIn = (namespace, tag, key, props = {}) =>
  el(tag, { ...props, dataset: { ...(props.dataset ?? {}), i18n: key } }, String(lookup(namespace, key)));

/**
 * A status value the API sent (`dead`, `succeeded`, …) in the chosen language (words.status).
 * @param {string} value
 */
export const statusText = (value) => String(lookup('status', value));

/**
 * A cell showing a status value, kept in the chosen language by translate() (it is its own namespace).
 * @param {string} value
 * @param {string} [className]
 */
export function statusCell(value, className) {
  return el('td', { className, dataset: { words: 'status', i18n: value } }, statusText(value));
}

/**
 * @param {string | null | undefined} text
 * @param {string} [className]
 */
export function cell(text, className) {
  return el('td', { className }, text ?? '');
}

/** A time in the chosen language's one format (web/dates.js). @param {string | null | undefined} value */
export const formatTime = (value) => writeTime(value, lang);

/**
 * The filter fields with a value, as a query string (no token or secret is ever part of it).
 * @param {Record<string, unknown>} params
 * @returns {'' | `?${string}`}
 */
export function queryString(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * A link inside the panel: `#/page/arg…?query` (the router reads location.hash).
 * @param {string} page
 * @param {string[]} [args]
 * @param {Record<string, unknown>} [query]
 */
export function pageLink(page, args = [], query = {}) {
  return `#/${[page, ...args].map(encodeURIComponent).join('/')}${queryString(query)}`;
}

/** A list's filter, by API parameter name, as its form and the address hold it. @typedef {Record<string, string>} Filter */

/**
 * Keeps only the keys the API accepts as a filter.
 * @param {Record<string, string | undefined>} query
 * @param {readonly string[]} names
 * @returns {Filter}
 */
export const pick = (query, names) => Object.fromEntries(names.filter((n) => query[n] !== undefined && query[n] !== '').map((n) => [n, String(query[n])]));

/**
 * Goes to a page of the panel; the same address again reloads it (a hash that does not change fires nothing).
 * @param {string} hash
 */
export function navigate(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}
