// @ts-check
// The Resource timeline's words.

import { deliveryFieldWords } from './words-inbound.js';

/** @typedef {{ source: string, state: string | null, event_id: string }} CurrentState */

export const timelineWords = {
  en: {
    ...deliveryFieldWords.en,
    show: 'Show',
    providerTime: 'provider time',
    verdict: 'verdict',
    reason: 'why',
    noEvents: 'No deliveries of this resource.',
    truncated: 'Only the first 1,000 events are shown.',
    /** @param {CurrentState} s */
    currentState: (s) => `${s.source}: now ${s.state ?? '—'} (applied last: ${s.event_id})`,
  },
  tr: {
    ...deliveryFieldWords.tr,
    show: 'Göster',
    providerTime: 'sağlayıcı zamanı',
    verdict: 'karar',
    reason: 'neden',
    noEvents: 'Bu nesnenin teslimatı yok.',
    truncated: 'Yalnızca ilk 1.000 olay gösteriliyor.',
    /** @param {CurrentState} s */
    currentState: (s) => `${s.source}: şu an ${s.state ?? '—'} (son uygulanan: ${s.event_id})`,
  },
};
