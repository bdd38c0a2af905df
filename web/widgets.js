// @ts-check
// The panel's widgets, built from lib.js's helpers: a table of rows, a filter form, and the dialog that
// asks before a change. Their words are the page's (its namespace is passed in).

import { $, cell, common, el, find, language, statusCell, statusText, translate, wordIn } from './lib.js';
import { formatInput, parseInput, timeInputProps } from './dates.js';

/** @typedef {import('./lib.js').Namespace} Namespace */
/** @typedef {import('./lib.js').Props} Props */

/**
 * A column of table(): its heading is the word `label` (or the plain `text`); its cell is `value(row)`
 * as text, or the node `cell(row)`, or `status(row)`: a status value the API sent, shown in the chosen language.
 * @template R
 * @typedef {{ label?: string, text?: string, value?: (row: R) => string | null | undefined, cell?: (row: R) => Node, status?: (row: R) => string, className?: (row: R) => string }} Column
 */

/**
 * A table: `columns` are `{ key, label (word key), value(row) → text, className?(row) }`, their words
 * the page's (`words`). Returns the table and a `render(rows, rowProps?)` that replaces its body.
 * @template R
 * @param {Column<R>[]} columns
 * @param {{ words: { namespace: Namespace }, id?: string, bodyId?: string, empty?: string, rowProps?: (row: R) => Props }} options
 */
export function table(columns, options) {
  const { namespace } = options.words;
  const body = el('tbody', { id: options.bodyId });
  const head = el(
    'thead',
    {},
    el(
      'tr',
      {},
      columns.map((c) => (c.label ? wordIn(namespace, 'th', c.label) : el('th', {}, c.text ?? ''))),
    ),
  );
  // A wide table scrolls inside its own box: the page (and the header bar) keep the window's width.
  const node = el('div', { className: 'table-scroll' }, el('table', { id: options.id }, head, body));
  /** @param {R} item */
  const row = (item) => {
    const tr = el('tr', options.rowProps?.(item) ?? {});
    for (const c of columns)
      tr.append(c.cell ? el('td', {}, c.cell(item)) : c.status ? statusCell(c.status(item), c.className?.(item)) : cell(c.value?.(item), c.className?.(item)));
    return tr;
  };
  return {
    node,
    body,
    row,
    /** @param {R[]} items */
    render(items) {
      body.replaceChildren(...items.map(row));
      if (items.length === 0 && options.empty)
        body.append(el('tr', {}, wordIn(namespace, 'td', options.empty, { colSpan: columns.length, className: 'empty' })));
    },
  };
}

/**
 * Asks before a change; resolves true when confirmed. One dialog element, reused.
 * @param {string} message
 * @returns {Promise<boolean>}
 */
export function confirmDialog(message) {
  let dialog = /** @type {HTMLDialogElement | null} */ (find('confirm'));
  if (!dialog) {
    dialog = el(
      'dialog',
      { id: 'confirm' },
      el(
        'form',
        { method: 'dialog' },
        el('p', { id: 'confirm-text' }),
        el(
          'menu',
          {},
          common.word('button', 'cancel', { value: 'cancel', id: 'confirm-cancel' }),
          common.word('button', 'confirm', { value: 'ok', id: 'confirm-ok' }),
        ),
      ),
    );
    document.body.append(dialog);
  }
  const shown = dialog;
  $('confirm-text').textContent = message;
  translate(shown);
  shown.returnValue = '';
  shown.showModal();
  return new Promise((resolve) => shown.addEventListener('close', () => resolve(shown.returnValue === 'ok'), { once: true }));
}

/**
 * ISO time → a time field's text in the chosen language's format (the browser's time zone), and back
 * (web/dates.js: the same format the tables show, not the browser's date picker's).
 * @param {string | Date} time
 */
export const toLocalInput = (time) => formatInput(time, language());
/** @param {string} value */
export const fromLocalInput = (value) => parseInput(value)?.toISOString() ?? '';

/** @typedef {{ name: string, label: string, type?: 'text' | 'number' | 'time' | 'select', options?: string[] }} FilterField */
/** @typedef {import('./lib.js').Filter} Filter */

/**
 * A filter form: `fields` are `{ name, label, type: 'text' | 'number' | 'time' | 'select', options? }`,
 * labelled with the page's `words`; `values` the current filter (by API parameter name).
 * `onApply(filter)` gets the filled-in fields.
 * @param {{ namespace: Namespace }} words
 * @param {string} id
 * @param {FilterField[]} fields
 * @param {Filter} values
 * @param {(filter: Filter) => void} onApply
 */
export function filterForm(words, id, fields, values, onApply) {
  const inputs = fields.map((f) => {
    const props = { name: f.name, id: `${id}-${f.name}` };
    /** @type {HTMLInputElement | HTMLSelectElement} */
    let input;
    if (f.type === 'select') {
      input = el(
        'select',
        props,
        el('option', { value: '' }, '—'),
        (f.options ?? []).map((o) => el('option', { value: o, dataset: { words: 'status', i18n: o } }, statusText(o))),
      );
      input.value = values[f.name] ?? '';
    } else if (f.type === 'time') {
      const value = values[f.name];
      input = el('input', { ...props, ...timeInputProps(value, language()) });
    } else {
      input = el('input', { ...props, type: f.type === 'number' ? 'number' : 'text', min: f.type === 'number' ? '0' : undefined, value: values[f.name] ?? '' });
    }
    return { f, input, label: el('label', {}, wordIn(words.namespace, 'span', f.label), input) };
  });
  const form = el(
    'form',
    { id, className: 'filters' },
    inputs.map((i) => i.label),
    common.word('button', 'apply', { type: 'submit' }),
    common.word('button', 'clear', { type: 'button', id: `${id}-clear`, on: { click: () => onApply({}) } }),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    /** @type {Filter} */
    const filter = {};
    for (const { f, input } of inputs) {
      const value = f.type === 'time' ? fromLocalInput(input.value) : input.value.trim();
      if (value !== '') filter[f.name] = value;
    }
    onApply(filter);
  });
  return form;
}
