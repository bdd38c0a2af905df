// The panel's words in English and Turkish. Keys are the English text's meaning, not the text itself.
export const messages = {
  en: {
    signIn: 'Sign in', token: 'Token', signOut: 'Sign out', inbound: 'Inbound', live: 'live updates',
    received: 'received', source: 'source', eventId: 'event id', type: 'type', status: 'status', attempts: 'attempts',
    back: '← Inbound', replay: 'Replay', body: 'Body', attemptHistory: 'Attempts', started: 'started', outcome: 'outcome',
    ms: 'ms', error: 'error', resource: 'resource', lastError: 'last error', wrongToken: 'Wrong token.',
    discard: 'Discard', headers: 'Headers', discarded: 'Discarded.',
    bodyTrimmed: (at) => `Body trimmed by retention (${at}). The record is kept, so copies stay duplicates; there is nothing to replay.`,
    replayed: (status) => `Replayed: now ${status}.`, replayRefused: (message) => `Replay refused: ${message}`,
  },
  tr: {
    signIn: 'Giriş yap', token: 'Erişim anahtarı', signOut: 'Çıkış', inbound: 'Gelen', live: 'canlı güncelleme',
    received: 'alındı', source: 'kaynak', eventId: 'olay kimliği', type: 'tür', status: 'durum', attempts: 'deneme',
    back: '← Gelen', replay: 'Yeniden işle', body: 'Gövde', attemptHistory: 'Denemeler', started: 'başladı', outcome: 'sonuç',
    ms: 'ms', error: 'hata', resource: 'nesne', lastError: 'son hata', wrongToken: 'Yanlış anahtar.',
    discard: 'Vazgeç', headers: 'Başlıklar', discarded: 'Vazgeçildi.',
    bodyTrimmed: (at) => `Gövde saklama süresi dolduğu için silindi (${at}). Kayıt duruyor, kopyalar yine tekrar sayılır; yeniden işlenecek bir şey yok.`,
    replayed: (status) => `Yeniden işlendi: şimdi ${status}.`, replayRefused: (message) => `Yeniden işleme reddedildi: ${message}`,
  },
};

/** The browser's language when the panel speaks it, else English. */
export function browserLanguage() {
  return (navigator.languages ?? [navigator.language]).some((l) => l?.toLowerCase().startsWith('tr')) ? 'tr' : 'en';
}
