// @ts-check
// Hand-drawn SVG charts, built with DOM calls only: the panel's CSP allows no inline style attributes,
// so every colour and size comes from classes in app.css (and the viewBox scales the drawing).

import { formatClock } from './dates.js';

const SVG = 'http://www.w3.org/2000/svg';

/** @typedef {{ key: string, label: string, values: number[] }} Series */
/** @typedef {{ key: string, label: string, value: number | null, text: string, className?: string }} BarRow */

/**
 * @param {string} name
 * @param {Record<string, string | number>} [attributes]
 * @param {string} [text]
 */
function svgElement(name, attributes = {}, text) {
  const el = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** @param {Series[]} series */
function legend(series) {
  const list = document.createElement('ul');
  list.className = 'legend';
  for (const s of series) {
    const item = document.createElement('li');
    item.className = `series-${s.key}`;
    item.textContent = `${s.label}: ${s.values.reduce((n, v) => n + v, 0)}`;
    list.append(item);
  }
  return list;
}

/**
 * Lines over time, one per series, drawn into `container` (replacing what was there).
 * `series`: [{ key, label, values: number[] }], all as long as `times` (Date[]).
 * @param {HTMLElement} container
 * @param {{ times: Date[], series: Series[], empty?: string }} chart
 */
export function lineChart(container, { times, series, empty }) {
  const width = 720;
  const height = 160;
  const pad = { left: 36, right: 8, top: 8, bottom: 20 };
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  /** @param {number} i */
  const x = (i) => pad.left + (times.length <= 1 ? 0 : (i / (times.length - 1)) * (width - pad.left - pad.right));
  /** @param {number} v */
  const y = (v) => height - pad.bottom - (v / max) * (height - pad.top - pad.bottom);
  const svg = svgElement('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', class: 'chart-svg' });
  svg.append(
    svgElement('line', { x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), class: 'axis' }),
    svgElement('line', { x1: pad.left, y1: y(max), x2: width - pad.right, y2: y(max), class: 'grid' }),
    svgElement('text', { x: pad.left - 4, y: y(max) + 4, class: 'tick end' }, String(max)),
    svgElement('text', { x: pad.left - 4, y: y(0) + 4, class: 'tick end' }, '0'),
  );
  if (times.length > 0) {
    /** @param {Date} d */
    const label = (d) => formatClock(d);
    const first = /** @type {Date} */ (times[0]);
    const last = /** @type {Date} */ (times[times.length - 1]);
    svg.append(svgElement('text', { x: x(0), y: height - 4, class: 'tick' }, label(first)));
    if (times.length > 1) svg.append(svgElement('text', { x: x(times.length - 1), y: height - 4, class: 'tick end' }, label(last)));
  }
  for (const s of series) {
    const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const line = svgElement('polyline', { points, class: `line series-${s.key}`, 'data-series': s.key });
    line.append(svgElement('title', {}, s.label));
    svg.append(line);
  }
  const total = series.reduce((n, s) => n + s.values.reduce((m, v) => m + v, 0), 0);
  container.dataset.total = String(total);
  container.replaceChildren(svg, legend(series));
  if (total === 0 && empty) {
    const note = document.createElement('p');
    note.className = 'note';
    note.textContent = empty;
    container.append(note);
  }
}

/**
 * Horizontal bars, one a row: `rows` = [{ key, label, value (0..1), text }]. The bar's length is the
 * value; `text` is written beside it.
 * @param {HTMLElement} container
 * @param {{ rows: BarRow[], empty?: string }} chart
 */
export function barChart(container, { rows, empty }) {
  const width = 720;
  const rowHeight = 22;
  const labelWidth = 200;
  const barWidth = width - labelWidth - 200;
  if (rows.length === 0) {
    const note = document.createElement('p');
    note.className = 'note';
    note.textContent = empty ?? '';
    container.dataset.total = '0';
    container.replaceChildren(note);
    return;
  }
  const svg = svgElement('svg', { viewBox: `0 0 ${width} ${rows.length * rowHeight + 4}`, role: 'img', class: 'chart-svg' });
  rows.forEach((row, i) => {
    const top = i * rowHeight + 2;
    const length = Math.max(0, Math.min(1, row.value ?? 0)) * barWidth;
    svg.append(
      svgElement('text', { x: labelWidth - 6, y: top + 15, class: 'tick end' }, row.label),
      svgElement('rect', { x: labelWidth, y: top + 3, width: barWidth, height: rowHeight - 8, class: 'bar-track' }),
      svgElement('rect', {
        x: labelWidth,
        y: top + 3,
        width: length.toFixed(1),
        height: rowHeight - 8,
        class: `bar ${row.className ?? ''}`,
        'data-key': row.key,
      }),
      svgElement('text', { x: labelWidth + barWidth + 6, y: top + 15, class: 'tick' }, row.text),
    );
  });
  container.dataset.total = String(rows.length);
  container.replaceChildren(svg);
}
