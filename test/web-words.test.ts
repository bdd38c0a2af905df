import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inboxStatuses } from '../src/inbox/filter.js';
import { outboxDeliveryStatuses } from '../src/outbox/types.js';

type Table = Record<string, string | ((...args: never[]) => string)>;
type Words = Record<string, { en: Table; tr: Table }>;

const WEB = new URL('../web/', import.meta.url);
// The panel's word tables are plain modules (no DOM at import), read here as the browser reads them.
const { words } = (await import(new URL('i18n.js', WEB).href)) as { words: Words };

/** Which namespace each page module speaks from (the shell's modules speak `common`). */
const MODULES: Record<string, string> = {
  'app.js': 'common',
  'lib.js': 'common',
  'widgets.js': 'common',
  'inbound.js': 'inbound',
  'delivery.js': 'delivery',
  'review.js': 'review',
  'timeline.js': 'timeline',
  'outbound.js': 'outbound',
  'outbound-views.js': 'outbound',
  'outbound-message.js': 'outbound',
  'overview.js': 'overview',
  'incidents.js': 'incidents',
  'audit.js': 'audit',
  'tenants.js': 'tenants',
  'tenant-settings.js': 'tenants',
};

/** Word keys a module names literally: t('key'), word(tag, 'key'), column labels, empty rows, data-i18n. */
function keysUsed(source: string): Set<string> {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, ''); // not the comments' examples
  const patterns = [/\bt\('(\w+)'\)/g, /\bword\('\w+', '(\w+)'/g, /\blabel: '(\w+)'/g, /\bempty: '(\w+)'/g, /\bi18n(?:Title)?: '(\w+)'/g, /\bfield\('(\w+)'/g];
  return new Set(patterns.flatMap((p) => [...code.matchAll(p)].map((m) => m[1]!)));
}

describe("the panel's words", () => {
  const namespaces = Object.keys(words);

  it('every namespace has the same keys in English and Turkish, each a text or a function of the same arity', () => {
    for (const ns of namespaces) {
      const { en, tr } = words[ns]!;
      expect(Object.keys(tr).sort(), ns).toEqual(Object.keys(en).sort());
      for (const key of Object.keys(en)) {
        const shape = (w: unknown) => (typeof w === 'function' ? `function/${w.length}` : typeof w);
        expect(shape(tr[key]), `${ns}.${key}`).toBe(shape(en[key]));
      }
    }
  });

  it('no page key is also a common one, so a page never reads a word it did not mean', () => {
    const common = new Set(Object.keys(words.common!.en));
    for (const ns of namespaces.filter((n) => n !== 'common')) {
      expect(
        Object.keys(words[ns]!.en).filter((key) => common.has(key)),
        ns,
      ).toEqual([]);
    }
  });

  it('each page reads its own namespace: every key a module names is its namespace’s or a common one', () => {
    for (const [file, ns] of Object.entries(MODULES)) {
      const known = new Set([...Object.keys(words[ns]!.en), ...Object.keys(words.common!.en)]);
      const used = keysUsed(readFileSync(new URL(file, WEB), 'utf8'));
      if (ns !== 'common') expect(used.size, file).toBeGreaterThan(0);
      expect(
        [...used].filter((key) => !known.has(key)),
        `${file} reads words.${ns}`,
      ).toEqual([]);
    }
    // Every page module of web/ is in the map above (a new page gets its namespace and is checked too);
    // the words themselves and the modules that speak none (the chart, dom.js's client and builder, the
    // time format of dates.js) aside.
    const pages = readdirSync(WEB).filter((f) => f.endsWith('.js') && !/^(words-|i18n|chart|dom|dates)/.test(f));
    expect(pages.sort()).toEqual(Object.keys(MODULES).sort());
  });

  it('a word two pages both use means each page’s own: the delivery page has no attempt yet, Overview no outbound attempt', () => {
    expect(words.delivery!.en.noAttempts).toBe('No attempt yet.');
    expect(words.overview!.en.noAttempts).toBe('No outbound attempts in the last hour.');
    expect(words.delivery!.tr.noAttempts).toBe('Henüz deneme yok.');
  });

  /**
   * Every status value the API can send, by where it comes from: inbound and outbound delivery statuses
   * (from the code's own lists), attempt outcomes (the inbox_attempts CHECK constraint, migration 002),
   * the timeline's verdicts (a delivery status, `done` read as `applied`), bulk jobs' kinds and statuses.
   */
  const apiStatuses = [
    ...inboxStatuses,
    ...outboxDeliveryStatuses,
    ...['done', 'retry', 'dead', 'stale', 'lost'],
    'applied',
    ...['inbox.replay', 'inbox.discard', 'running', 'done', 'cancelled', 'failed'],
  ];

  it('every status value the API can return has a Turkish word of its own', () => {
    const { en, tr } = words.status!;
    for (const value of new Set(apiStatuses)) {
      expect(en[value], value).toBe(value);
      expect(typeof tr[value], value).toBe('string');
      expect(tr[value], value).not.toBe(value);
    }
  });

  /** Turkish words that are rightly the English ones: codes, formats and units. */
  const SAME_IN_BOTH = new Set(['CSV', 'Excel', 'PDF', 'ms', 'p50 / p99 ms', 'URL']);

  it('no Turkish word is left in English, but for codes, formats and units', () => {
    for (const ns of namespaces) {
      const { en, tr } = words[ns]!;
      for (const key of Object.keys(en)) {
        const [e, t] = [en[key], tr[key]];
        // A function's words are compared on a sample call.
        const text = (w: unknown) => (typeof w === 'function' ? String((w as (...a: unknown[]) => unknown)(1, 2)) : String(w));
        if (text(e) === text(t)) expect(SAME_IN_BOTH.has(text(t)), `${ns}.${key} is "${text(t)}" in both`).toBe(true);
      }
    }
  });
});

describe("the merchant portal's words", async () => {
  const PORTAL = new URL('../web/portal/', import.meta.url);
  // Plain modules too; words.js reads navigator only when asked for the browser's language.
  const { portalWords } = (await import(new URL('words.js', PORTAL).href)) as { portalWords: { en: Table; tr: Table } };
  const { en, tr } = portalWords;
  const shape = (w: unknown) => (typeof w === 'function' ? `function/${w.length}` : typeof w);

  it('has the same keys in English and Turkish, each a text or a function of the same arity, none left in English', () => {
    expect(Object.keys(tr).sort()).toEqual(Object.keys(en).sort());
    for (const key of Object.keys(en)) {
      expect(shape(tr[key]), key).toBe(shape(en[key]));
      const text = (w: unknown) => (typeof w === 'function' ? String((w as (...a: unknown[]) => unknown)(1, 2)) : String(w));
      if (text(en[key]) === text(tr[key])) expect(['URL'], `portal.${key} is "${text(tr[key])}" in both`).toContain(text(tr[key]));
    }
  });

  it("says every sending status the API returns, in the panel's words (iletildi, bekliyor, başarısız)", () => {
    for (const value of outboxDeliveryStatuses) {
      expect(en[value], value).toBe(value);
      expect(tr[value], value).toBe(words.status!.tr[value]);
    }
    expect([tr.succeeded, tr.pending, tr.failed]).toEqual(['iletildi', 'bekliyor', 'başarısız']);
  });

  it('every key a portal module names is one of its words', () => {
    const known = new Set(Object.keys(en));
    const modules = readdirSync(PORTAL).filter((f) => f.endsWith('.js') && f !== 'words.js');
    expect(modules.sort()).toEqual(['app.js', 'delivery.js', 'event-types.js', 'lib.js', 'settings.js', 'webhooks.js']);
    for (const file of modules) {
      const source = readFileSync(new URL(file, PORTAL), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
      const patterns = [/\bt\('(\w+)'\)/g, /\bword\('\w+', '(\w+)'/g, /\bbutton\('(\w+)'/g, /\bi18n: '(\w+)'/g];
      const used = patterns.flatMap((p) => [...source.matchAll(p)].map((m) => m[1]!));
      if (file !== 'lib.js') expect(used.length, file).toBeGreaterThan(0);
      expect(
        used.filter((key) => !known.has(key)),
        file,
      ).toEqual([]);
    }
  });
});
