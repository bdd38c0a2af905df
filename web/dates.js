// @ts-check
// One way to write a time per language, for the panel and the merchant portal alike: tables, the time
// fields of filters and forms, and the charts' ticks. Turkish writes `07.12.2026 14:03:05` (day first,
// dots), English `2026-12-07 14:03:05` (year first: never read as month/day). The exports write the
// same (src/dashboard/exports/locale.ts; a test keeps the two the same). The time fields are text
// fields in that format, not the browser's date pickers, whose format follows the browser's locale
// (`12/07/2026, 02:03 PM` beside a table's `07.12.2026`) rather than the page's language.
// The panel serves this file as /assets/dates.js, the portal as /portal/dates.js.

/** @typedef {'en' | 'tr'} Language */

/**
 * A time's fields in a zone (the browser's unless named), two digits each, the year four.
 * @param {Date} d
 * @param {string} [timeZone]
 */
function parts(d, timeZone) {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  /** @type {Record<string, string>} */
  const p = {};
  for (const part of format.formatToParts(d)) p[part.type] = part.value;
  return p;
}

/**
 * A time as the language writes it, to the second: `07.12.2026 14:03:05` / `2026-12-07 14:03:05`.
 * @param {string | Date | null | undefined} value
 * @param {Language} lang
 * @param {string} [timeZone] the browser's unless named
 */
export function formatTime(value, lang, timeZone) {
  if (!value) return '';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return '';
  const p = parts(d, timeZone);
  return lang === 'tr' ? `${p.day}.${p.month}.${p.year} ${p.hour}:${p.minute}:${p.second}` : `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/**
 * A time as a time field holds it: the same format, to the minute, in the browser's zone.
 * @param {string | Date | null | undefined} value
 * @param {Language} lang
 */
export const formatInput = (value, lang) => formatTime(value, lang).slice(0, 16);

/**
 * A chart's tick: hours and minutes, 24-hour, the same in both languages.
 * @param {Date} d
 */
export function formatClock(d) {
  const p = parts(d);
  return `${p.hour}:${p.minute}`;
}

/** What a time field shows when empty, by language. */
const placeholders = { en: 'yyyy-mm-dd hh:mm', tr: 'gg.aa.yyyy ss:dd' };
/** What a time field accepts: either language's format (what parseInput reads). */
const INPUT_PATTERN = String.raw`\s*(\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}(:\d{2})?|\d{1,2}\.\d{1,2}\.\d{4} \d{1,2}:\d{2}(:\d{2})?)\s*`;

/**
 * A time field's properties (for el('input', …)): a text field in the language's format, which the
 * browser checks before the form is sent.
 * @param {string | Date | null | undefined} value
 * @param {Language} lang
 */
export const timeInputProps = (value, lang) => ({
  type: 'text',
  inputMode: 'numeric',
  autocomplete: 'off',
  placeholder: placeholders[lang],
  pattern: INPUT_PATTERN,
  title: placeholders[lang],
  value: formatInput(value, lang),
  dataset: { time: '' },
});

/**
 * A time field's text as a Date in the browser's zone, in either language's format (a field filled in
 * one language still reads after switching to the other); null when it is neither or no such day.
 * @param {string} text
 * @returns {Date | null}
 */
export function parseInput(text) {
  const s = text.trim();
  const en = /^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  const tr = /^(\d{1,2})\.(\d{1,2})\.(\d{4}) (\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  /** @type {number[]} */
  let f;
  if (en) f = [en[1], en[2], en[3], en[4], en[5], en[6]].map((v) => Number(v ?? 0));
  else if (tr) f = [tr[3], tr[2], tr[1], tr[4], tr[5], tr[6]].map((v) => Number(v ?? 0));
  else return null;
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = f;
  const d = new Date(year, month - 1, day, hour, minute, second);
  // 31.02.2026 would roll over into March: not a day that exists.
  if (d.getFullYear() !== year || d.getMonth() !== month - 1 || d.getDate() !== day || d.getHours() !== hour || d.getMinutes() !== minute) return null;
  return d;
}

/** The browser's time zone (`Europe/Istanbul`), which exports are asked to write their times in. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
