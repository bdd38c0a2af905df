// @ts-check
// A delivery's detail page's words.

import { deliveryFieldWords } from './words-inbound.js';

export const deliveryWords = {
  en: {
    ...deliveryFieldWords.en,
    back: '← Inbound',
    replay: 'Replay',
    discard: 'Discard',
    body: 'Body',
    pretty: 'Pretty',
    raw: 'Raw',
    headers: 'Headers',
    attemptHistory: 'Attempts',
    started: 'started',
    outcome: 'outcome',
    ms: 'ms',
    error: 'error',
    resource: 'resource',
    occurred: 'occurred',
    processed: 'processed',
    nextAttempt: 'next attempt',
    resultRef: 'result',
    discarded: 'Discarded.',
    noAttempts: 'No attempt yet.',
    base64: 'The body is not UTF-8 text: shown as base64.',
    /** @param {string} status */
    replayed: (status) => `Replayed: now ${status}.`,
    /** @param {string} message */
    replayRefused: (message) => `Replay refused: ${message}`,
    /** @param {string} at */
    bodyTrimmed: (at) => `Body trimmed by retention (${at}). The record is kept, so copies stay duplicates; there is nothing to replay.`,
    erase: 'Erase body',
    eraseConfirm: "Erase this delivery's body and headers for good (a person's data)? The record stays, so copies stay duplicates. This cannot be undone.",
    /** @param {string} at */
    bodyErased: (at) => `Body and headers erased on request (${at}). The record is kept, so copies stay duplicates; it is never processed again.`,
    /** @param {number} n */
    erased: (n) => (n > 0 ? 'Erased.' : 'Not erased: still in flight; process or discard it first.'),
  },
  tr: {
    ...deliveryFieldWords.tr,
    back: '← Gelen',
    replay: 'Yeniden işle',
    discard: 'Vazgeç',
    body: 'Gövde',
    pretty: 'Biçimli',
    raw: 'Ham',
    headers: 'Başlıklar',
    attemptHistory: 'Denemeler',
    started: 'başladı',
    outcome: 'sonuç',
    ms: 'ms',
    error: 'hata',
    resource: 'nesne',
    occurred: 'olay zamanı',
    processed: 'işlendi',
    nextAttempt: 'sonraki deneme',
    resultRef: 'sonuç kaydı',
    discarded: 'Vazgeçildi.',
    noAttempts: 'Henüz deneme yok.',
    base64: 'Gövde UTF-8 metin değil: base64 olarak gösteriliyor.',
    /** @param {string} status */
    replayed: (status) => `Yeniden işlendi: şimdi ${status}.`,
    /** @param {string} message */
    replayRefused: (message) => `Yeniden işleme reddedildi: ${message}`,
    /** @param {string} at */
    bodyTrimmed: (at) => `Gövde saklama süresi dolduğu için silindi (${at}). Kayıt duruyor, kopyalar yine tekrar sayılır; yeniden işlenecek bir şey yok.`,
    erase: 'Gövdeyi sil',
    eraseConfirm: 'Bu teslimatın gövdesi ve başlıkları (kişisel veri) kalıcı olarak silinsin mi? Kayıt durur, kopyalar yine tekrar sayılır. Geri alınamaz.',
    /** @param {string} at */
    bodyErased: (at) => `Gövde ve başlıklar istek üzerine silindi (${at}). Kayıt duruyor, kopyalar yine tekrar sayılır; bir daha işlenmez.`,
    /** @param {number} n */
    erased: (n) => (n > 0 ? 'Silindi.' : 'Silinmedi: teslimat henüz işleniyor; önce işlenmesini bekleyin ya da vazgeçin.'),
  },
};
