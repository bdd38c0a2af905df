// @ts-check
// The Review queue's words.

import { deliveryFieldWords } from './words-inbound.js';

/** @typedef {{ kind: string, status: string, processed: number, total: number, changed: number, skipped: number }} JobLine */

export const reviewWords = {
  en: {
    ...deliveryFieldWords.en,
    selectAll: 'select all on this page',
    replaySelected: 'Replay selected',
    discardSelected: 'Discard selected',
    matching: 'Everything matching this filter:',
    dryRun: 'Count (dry run)',
    replayAll: 'Replay all matching',
    discardAll: 'Discard all matching',
    cancelJob: 'Cancel job',
    emptyQueue: 'The review queue is empty.',
    /** @param {number} n */
    matchCount: (n) => (n === 1 ? '1 dead delivery matches.' : `${n} dead deliveries match.`),
    /** @param {number} changed @param {number} skipped */
    doneSelected: (changed, skipped) => `${changed} done, ${skipped} skipped (changed meanwhile).`,
    /** @param {JobLine} j */
    jobLine: (j) => `${j.kind} ${j.status}: ${j.processed} / ${j.total} (changed ${j.changed}, skipped ${j.skipped})`,
    /** @param {number} n */
    confirmDiscard: (n) => (n === 1 ? 'Discard 1 delivery for good?' : `Discard ${n} deliveries for good?`),
  },
  tr: {
    ...deliveryFieldWords.tr,
    selectAll: 'bu sayfadakilerin hepsini seç',
    replaySelected: 'Seçilenleri yeniden işle',
    discardSelected: 'Seçilenlerden vazgeç',
    matching: 'Bu filtreye uyan her şey:',
    dryRun: 'Say (değiştirmeden)',
    replayAll: 'Uyanların hepsini yeniden işle',
    discardAll: 'Uyanların hepsinden vazgeç',
    cancelJob: 'İşi durdur',
    emptyQueue: 'İnceleme kuyruğu boş.',
    /** @param {number} n */
    matchCount: (n) => `İncelemedeki ${n} teslimat uyuyor.`,
    /** @param {number} changed @param {number} skipped */
    doneSelected: (changed, skipped) => `${changed} tamam, ${skipped} atlandı (bu arada değişti).`,
    /** @param {JobLine} j */
    jobLine: (j) => `${j.kind} ${j.status}: ${j.processed} / ${j.total} (değişen ${j.changed}, atlanan ${j.skipped})`,
    /** @param {number} n */
    confirmDiscard: (n) => `${n} teslimattan kalıcı olarak vazgeçilsin mi?`,
  },
};
