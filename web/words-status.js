// @ts-check
// The status values the API sends (inbound and outbound deliveries, attempts, the ordering guard's
// verdicts, bulk jobs), keyed by the value itself. English shows the value as the API spells it, so
// what an operator reads matches the API, the CLI and the logs; Turkish says what it means. A test
// checks every value the API can return has a Turkish word that is not the English one.

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
    retry: 'retry',
    lost: 'lost',
    applied: 'applied',
    running: 'running',
    'inbox.replay': 'inbox.replay',
    'inbox.discard': 'inbox.discard',
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
    retry: 'yeniden denenecek',
    lost: 'yarıda kaldı',
    applied: 'uygulandı',
    running: 'sürüyor',
    'inbox.replay': 'toplu yeniden işleme',
    'inbox.discard': 'toplu vazgeçme',
  },
};
