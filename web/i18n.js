// @ts-check
// The panel's words in English and Turkish, one namespace a page (words.inbound, words.outbound …) and
// `common` for the shell (sign-in, the navigation) and the controls every page shares. A page reads its
// own namespace, then `common`; a test checks no page key is also a common one and that every table
// has the same keys in both languages. Keys are the English text's meaning, not the text itself.

import { deliveryWords } from './words-delivery.js';
import { inboundWords } from './words-inbound.js';
import { outboundWords } from './words-outbound.js';
import { overviewWords } from './words-overview.js';
import { reviewWords } from './words-review.js';
import { statusWords } from './words-status.js';
import { timelineWords } from './words-timeline.js';
import { incidentsWords } from './words-incidents.js';
import { auditWords } from './words-audit.js';
import { tenantsWords } from './words-tenants.js';

const common = {
  en: {
    signIn: 'Sign in',
    token: 'Token',
    signOut: 'Sign out',
    wrongToken: 'Wrong token.',
    apply: 'Apply',
    clear: 'Clear',
    cancel: 'Cancel',
    confirm: 'Confirm',
    live: 'live updates',
    inbound: 'Inbound',
    review: 'Review queue',
    timeline: 'Resource timeline',
    outbound: 'Outbound',
    overview: 'Overview',
    incidents: 'Incidents',
    audit: 'Audit',
    tenants: 'Tenants',
  },
  tr: {
    signIn: 'Giriş yap',
    token: 'Erişim anahtarı',
    signOut: 'Çıkış',
    wrongToken: 'Yanlış anahtar.',
    apply: 'Uygula',
    clear: 'Temizle',
    cancel: 'İptal',
    confirm: 'Onayla',
    live: 'canlı güncelleme',
    inbound: 'Gelen',
    review: 'İnceleme kuyruğu',
    timeline: 'Nesne zaman çizelgesi',
    outbound: 'Giden',
    overview: 'Özet',
    incidents: 'Arızalar',
    audit: 'Denetim',
    tenants: 'Üye işyerleri',
  },
};

/** Every namespace's words, by namespace and then language. */
export const words = {
  common,
  inbound: inboundWords,
  delivery: deliveryWords,
  review: reviewWords,
  timeline: timelineWords,
  outbound: outboundWords,
  overview: overviewWords,
  incidents: incidentsWords,
  audit: auditWords,
  tenants: tenantsWords,
  status: statusWords,
};

/** The browser's language when the panel speaks it, else English. */
export function browserLanguage() {
  return (navigator.languages ?? [navigator.language]).some((l) => l?.toLowerCase().startsWith('tr')) ? 'tr' : 'en';
}
