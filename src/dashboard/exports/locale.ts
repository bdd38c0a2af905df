import { z } from 'zod';

/**
 * The language and time zone an export is written in. Without a language (the API's and the CLI's
 * default) the CSV keeps its machine-readable form: column keys as headers, times as ISO 8601 in UTC,
 * status values as the API spells them. With one (the panel and the portal always ask), every header,
 * status and label is in that language and times are in the asked zone, which the export states.
 */
export interface ExportLocale {
  lang: ExportLanguage | undefined;
  /** An IANA time zone (`Europe/Istanbul`); `UTC` unless asked. */
  timeZone: string;
}

export const exportLanguages = ['en', 'tr'] as const;
export type ExportLanguage = (typeof exportLanguages)[number];

export const DEFAULT_LOCALE: ExportLocale = { lang: undefined, timeZone: 'UTC' };

/** Whether the runtime knows the zone (Intl refuses an unknown one with a RangeError). */
function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The export query's own fields: `lang` and `tz`, beside the list's filter. */
export const exportLocaleFields = {
  lang: z
    .enum(exportLanguages)
    .optional()
    .describe("headers, statuses, labels and times in this language; without it the CSV's headers are the column keys and times ISO 8601"),
  tz: z
    .string()
    .max(64)
    .refine(knownZone, 'an IANA time zone, e.g. Europe/Istanbul or UTC')
    .optional()
    .describe('the time zone times are written in, stated in the export (an IANA name, e.g. Europe/Istanbul); default UTC'),
};

const parts = (d: Date, timeZone: string): Record<string, string> => {
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
  return Object.fromEntries(format.formatToParts(d).map((p) => [p.type, p.value]));
};

/**
 * A time as the panel and the portal show it in that language (web/dates.js, which a test keeps the
 * same): `07.12.2026 14:03:05` in Turkish, `2026-12-07 14:03:05` in English: one format a language,
 * day first with dots in Turkish, and the unambiguous year-first form in English.
 */
export function formatTime(d: Date, lang: ExportLanguage, timeZone: string): string {
  const p = parts(d, timeZone);
  return lang === 'tr' ? `${p.day}.${p.month}.${p.year} ${p.hour}:${p.minute}:${p.second}` : `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

/** The zone's offset from UTC at that moment, in minutes (+180 for Istanbul). */
export function zoneOffsetMinutes(d: Date, timeZone: string): number {
  const p = parts(d, timeZone);
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return Math.round((wall - Math.floor(d.getTime() / 1000) * 1000) / 60_000);
}

/** The zone as an export states it: `Europe/Istanbul (UTC+03:00)`, or `UTC`. */
export function zoneLabel(timeZone: string, at: Date): string {
  if (timeZone === 'UTC') return 'UTC';
  const offset = zoneOffsetMinutes(at, timeZone);
  const abs = Math.abs(offset);
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${timeZone} (UTC${offset < 0 ? '-' : '+'}${hhmm})`;
}

/** Every word an export writes, by language; a test keeps the two key sets equal. */
export const exportWords = {
  en: {
    inboundTitle: 'inbound deliveries',
    outboundTitle: 'outbound deliveries',
    sheet: 'deliveries',
    filter: 'Filter',
    period: 'Period',
    made: 'Made',
    timeZone: 'Time zone',
    tenant: 'Merchant',
    everything: 'everything',
    allTime: 'all time',
    from: 'from',
    until: 'until',
    totals: 'Totals',
    rows: 'rows',
    moreRows: (n: number) => `… and ${n} more rows (export CSV or Excel for all of them).`,
    noRows: 'No rows match.',
    page: (n: number, of: number) => `page ${n} of ${of}`,
    // Headers, by column key (what the filter names too)
    received_at: 'received at',
    source: 'source',
    event_id: 'event id',
    event_type: 'event type',
    type: 'event type',
    resource_id: 'resource id',
    status: 'status',
    attempts: 'attempts',
    processed_at: 'processed at',
    last_error: 'error',
    delivery_id: 'delivery id',
    message_id: 'message id',
    endpoint_id: 'endpoint',
    url: 'target URL',
    last_status_code: 'HTTP code',
    last_duration_ms: 'response time (ms)',
    created_at: 'created',
    last_attempt_at: 'last attempt',
    next_attempt_at: 'next attempt',
    completed_at: 'completed',
    erased_at: 'erased (personal data)',
    min_attempts: 'minimum attempts',
    tenant_id: 'merchant',
  },
  tr: {
    inboundTitle: 'gelen bildirimler',
    outboundTitle: 'webhook gönderimleri',
    sheet: 'webhooklar',
    filter: 'Filtre',
    period: 'Dönem',
    made: 'Oluşturulma',
    timeZone: 'Saat dilimi',
    tenant: 'Üye işyeri',
    everything: 'tümü',
    allTime: 'tüm zamanlar',
    from: 'başlangıç',
    until: 'bitiş',
    totals: 'Toplam',
    rows: 'satır',
    moreRows: (n: number) => `… ve ${n} satır daha (hepsi için CSV ya da Excel olarak dışa aktarın).`,
    noRows: 'Filtreye uyan satır yok.',
    page: (n: number, of: number) => `sayfa ${n} / ${of}`,
    received_at: 'alınma zamanı',
    source: 'kaynak',
    event_id: 'olay kimliği',
    event_type: 'olay türü',
    type: 'olay türü',
    resource_id: 'nesne kimliği',
    status: 'durum',
    attempts: 'deneme sayısı',
    processed_at: 'işlenme zamanı',
    last_error: 'hata',
    delivery_id: 'gönderim no',
    message_id: 'mesaj kimliği',
    endpoint_id: 'uç nokta',
    url: 'hedef URL',
    last_status_code: 'HTTP yanıt kodu',
    last_duration_ms: 'yanıt süresi (ms)',
    created_at: 'oluşturuldu',
    last_attempt_at: 'son deneme',
    next_attempt_at: 'sonraki deneme',
    completed_at: 'tamamlandı',
    erased_at: 'silindi (kişisel veri)',
    min_attempts: 'en az deneme',
    tenant_id: 'üye işyeri',
  },
} as const;

/**
 * The status values of both lists, as the panel's and the portal's words say them (web/words-status.js,
 * which a test keeps the same). English keeps the API's spelling.
 */
export const statusWords = {
  en: {
    pending: 'pending',
    processing: 'processing',
    done: 'done',
    stale: 'stale',
    dead: 'dead',
    discarded: 'discarded',
    sending: 'sending',
    succeeded: 'succeeded',
    failed: 'failed',
    cancelled: 'cancelled',
  },
  tr: {
    pending: 'bekliyor',
    processing: 'işleniyor',
    done: 'tamamlandı',
    stale: 'eskimiş',
    dead: 'incelemede',
    discarded: 'vazgeçildi',
    sending: 'gönderiliyor',
    succeeded: 'iletildi',
    failed: 'başarısız',
    cancelled: 'iptal edildi',
  },
} as const;

export type ExportWord = keyof (typeof exportWords)['en'];

/** A status value in the language (unknown values as they are). */
export function statusText(value: string, lang: ExportLanguage): string {
  return (statusWords[lang] as Record<string, string>)[value] ?? value;
}

/** A header or label in the language; a key without a word is shown as it is. */
export function exportWord(key: string, lang: ExportLanguage): string {
  const word = (exportWords[lang] as Record<string, unknown>)[key];
  return typeof word === 'string' ? word : key;
}
