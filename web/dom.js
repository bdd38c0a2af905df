// @ts-check
// What the operator panel and the merchant portal share: the API client and the element builder. The
// panel serves it as /assets/dom.js, the portal as /portal/dom.js (src/dashboard/portal.ts), each page's
// own lib.js importing it relatively. Text from the store is only ever set as textContent, never as HTML.

export class ApiError extends Error {
  /**
   * @param {string} message
   * @param {number} status
   * @param {string | undefined} code
   */
  constructor(message, status, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * Calls the API under /api/v1 with the session cookie; the CSRF header goes with every call once it is
 * known (a read that needs more than the view permission asks for it too). A refusal throws ApiError.
 * @param {string} method
 * @param {string} path below /api/v1
 * @param {unknown} body
 * @param {string | null} csrfToken
 * @param {Record<string, string>} [extraHeaders] the page's language (`accept-language`, which refusals are answered in) and
 *   the portal's marker (`x-tekil-portal`), which picks its own session cookie
 * @returns {Promise<any>}
 */
export async function request(method, path, body, csrfToken, extraHeaders = {}) {
  /** @type {Record<string, string>} */
  const headers = { ...extraHeaders };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (csrfToken) headers['x-tekil-csrf'] = csrfToken;
  const res = await fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const data = res.headers.get('content-type')?.includes('json') ? await res.json() : null;
  // In Turkish, `message` is the code's Turkish text and `detail` the English specifics (the field, the limit).
  const message = data?.message ? (data.detail ? `${data.message} (${data.detail})` : data.message) : `HTTP ${res.status}`;
  if (!res.ok) throw new ApiError(message, res.status, data?.error);
  return data;
}

/**
 * An element's properties for el(): its DOM properties or attributes, `dataset`, and `on` (listeners).
 * @typedef {{ dataset?: Record<string, string>, on?: Record<string, (event: Event) => void>, [name: string]: unknown }} Props
 */
/** @typedef {Node | string | number | null | undefined | false} Child */

/**
 * Makes an element: `el('button', { type: 'button', dataset: { i18n: 'replay' } }, 'Replay')`.
 * Children are nodes or text (text is always a text node).
 * @template {keyof HTMLElementTagNameMap} T
 * @param {T} tag
 * @param {Props} [props]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[T]}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'on') for (const [event, fn] of Object.entries(/** @type {Record<string, EventListener>} */ (value))) node.addEventListener(event, fn);
    else if (key in node && key !== 'list') /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (node))[key] = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
  return node;
}
