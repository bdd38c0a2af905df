// @ts-check
// The merchant portal's shared parts: the API client (the session cookie, the CSRF header on changes),
// the words in the chosen language, and small DOM helpers. The portal is its own small app served under
// /portal/assets/; the API client and the element builder are the panel's (../dom.js). Text from the
// store is only ever set as textContent, never as HTML.

// ../dom.js is the panel's web/dom.js, which the portal serves as /portal/dom.js.
import { el, request } from '../dom.js';
import { browserLanguage, portalWords } from './words.js';
// ../dates.js is the panel's web/dates.js, served as /portal/dates.js: one time format per language.
import { formatTime as writeTime } from '../dates.js';

export { ApiError, el } from '../dom.js';
/** @typedef {import('../dom.js').Props} Props */

/** @typedef {keyof typeof portalWords.en} WordKey */
/** @typedef {string | ((...args: never[]) => string)} Word */

/** The tenant's session: the CSRF token is kept in memory only (never in storage). */
export const session = {
  /** @type {string | null} */ csrfToken: null,
  /** @type {'admin' | 'operator' | 'viewer' | null} */ role: null,
  /** @type {{ id: string, name: string } | null} */ tenant: null,
};

const LANGUAGE_KEY = 'tekil-portal-lang';
/** @type {'en' | 'tr'} */
let lang = browserLanguage();
try {
  // The merchant's own choice, kept in this browser (a word, never anything of the session).
  const kept = localStorage.getItem(LANGUAGE_KEY);
  if (kept === 'en' || kept === 'tr') lang = kept;
} catch {
  // storage refused (a sandboxed frame): the browser's language it is
}
export const language = () => lang;
/** @param {string} next */
export function setLanguage(next) {
  lang = next === 'tr' ? 'tr' : 'en';
  try {
    localStorage.setItem(LANGUAGE_KEY, lang);
  } catch {
    // not kept: the choice lasts until the page is left
  }
}

/**
 * A word in the chosen language (else the English).
 * @template {WordKey} K
 * @param {K} key
 * @returns {(typeof portalWords.en)[K]}
 */
export const t = (key) => /** @type {never} */ (portalWords[lang][key] ?? portalWords.en[key]);

/** A status value the API sent (`succeeded`, `failed` …) in the chosen language. @param {string} value */
export const statusText = (value) => String(/** @type {Record<string, Word | undefined>} */ (portalWords[lang])[value] ?? value);

/** Puts the chosen language's words into every marked element (text only). @param {ParentNode} [root] */
export function translate(root = document) {
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = String(t(/** @type {WordKey} */ (node.getAttribute('data-i18n'))));
  for (const node of root.querySelectorAll('[data-status]')) node.textContent = statusText(node.getAttribute('data-status') ?? '');
}

/**
 * Calls the API with the session cookie (dom.js's request).
 * @param {'GET' | 'POST' | 'PATCH'} method
 * @param {string} path below /api/v1
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
// The portal's calls say they are the portal's, so the API reads the portal's session cookie
// (tekil_portal), never the panel's: a portal link opened in the panel's browser leaves its session alone.
// Refusals come back in the portal's language (Accept-Language, src/errors-tr.ts).
export const api = (method, path, body) => request(method, path, body, session.csrfToken, { 'x-tekil-portal': '1', 'accept-language': lang });

/** Whether the merchant may change things (resend, endpoints): a viewer link may not. */
export const canOperate = () => session.role !== null && session.role !== 'viewer';

/**
 * An element whose text is a word, kept in the chosen language by translate().
 * @template {keyof HTMLElementTagNameMap} T
 * @param {T} tag
 * @param {WordKey} key
 * @param {Props} [props]
 */
export const word = (tag, key, props = {}) => el(tag, { ...props, dataset: { ...(props.dataset ?? {}), i18n: key } }, String(t(key)));

/** A cell showing a status value in the chosen language. @param {string} value */
export const statusCell = (value) => el('td', { className: `status status-${value}`, dataset: { status: value } }, statusText(value));

/** @param {string | number | null | undefined} text @param {string} [className] */
export const cell = (text, className) => el('td', { className }, text == null ? '' : String(text));

/** A time in the chosen language's one format (web/dates.js). @param {string | null | undefined} value */
export const formatTime = (value) => writeTime(value, lang);

/**
 * A delivery's next try: only while it may still be sent, and never a time in the past (a delivery
 * whose time has come is being sent, or waits for the endpoint's circuit breaker's probe: "now").
 * @param {{ status: string, next_attempt_at: string | null }} d
 */
export const nextTry = (d) =>
  d.status !== 'pending' && d.status !== 'sending'
    ? ''
    : d.next_attempt_at && Date.parse(d.next_attempt_at) > Date.now()
      ? formatTime(d.next_attempt_at)
      : String(t('dueNow'));

/**
 * The fields with a value, as a query string.
 * @param {Record<string, unknown>} params
 * @returns {string}
 */
export function queryString(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** @param {unknown} err */
export const messageOf = (err) => (err instanceof Error ? err.message : String(err));

/**
 * A page of the portal, by the first part of the hash: builds its DOM into its section and stops what
 * it runs (polling) when left.
 * @typedef {{ id: string, nav?: WordKey, show(section: HTMLElement, args: string[], query: Record<string, string>): Promise<void>, leave?(): void }} Page
 */
