// @ts-check
// The Outbound page's words.

export const outboundWords = {
  en: {
    /** @param {string} at */
    payloadTrimmed: (at) => `Payload trimmed by retention (${at}): there is nothing left to replay.`,
    newEndpoint: 'New endpoint', exportDeliveries: 'Export deliveries:',
    endpoint: 'endpoint', state: 'state', successRate: 'success (1 h)', latency: 'p50 / p99 ms', failingSince: 'failing since',
    failedInRow: 'failed in a row', replayFailed: 'Replay failed deliveries', allEndpoints: 'all endpoints',
    createdFrom: 'created from', createdUntil: 'until', replayFailedButton: 'Replay failed', description: 'description',
    eventTypes: 'event types (comma-separated, empty for all)', eventTypeList: 'event types', enabled: 'enabled', disabled: 'disabled', save: 'Save',
    secretOnce: "The endpoint's signing secret. It is shown this once: copy it now.", backOutbound: '← Outbound', edit: 'Edit',
    enable: 'Enable', disable: 'Disable', rotateSecret: 'Rotate secret', sendPing: 'Send test.ping', history: 'Message history',
    created: 'created', message: 'message', type: 'type', status: 'status', attempts: 'attempts', code: 'code', ms: 'ms', error: 'error',
    started: 'started', response: 'response', body: 'Body', replay: 'Replay', url: 'URL', scheme: 'scheme',
    /** @param {string} until */
    rotated: (until) => `New secret made; the old one keeps signing until ${until}.`,
    /** @param {string} id */
    pingSent: (id) => `test.ping sent (${id}).`,
    /** @param {number} n */
    messageReplayed: (n) => `Replayed to ${n} destination(s).`,
    /** @param {number} n */
    failedReplayed: (n) => `${n} failed deliveries replayed.`,
  },
  tr: {
    /** @param {string} at */
    payloadTrimmed: (at) => `Gövde saklama süresi dolduğu için silindi (${at}): yeniden gönderilecek bir şey yok.`,
    newEndpoint: 'Yeni uç nokta', exportDeliveries: 'Gönderimleri indir:',
    endpoint: 'uç nokta', state: 'durum', successRate: 'başarı (1 sa)', latency: 'p50 / p99 ms', failingSince: 'şu zamandan beri hatalı',
    failedInRow: 'art arda hata', replayFailed: 'Başarısız gönderimleri yeniden gönder', allEndpoints: 'tüm uç noktalar',
    createdFrom: 'oluşturulma başı', createdUntil: 'sonu', replayFailedButton: 'Yeniden gönder', description: 'açıklama',
    eventTypes: 'olay türleri (virgülle, boşsa hepsi)', eventTypeList: 'olay türleri', enabled: 'etkin', disabled: 'devre dışı', save: 'Kaydet',
    secretOnce: 'Uç noktanın imza anahtarı. Yalnızca bu kez gösterilir: şimdi kopyalayın.', backOutbound: '← Giden', edit: 'Düzenle',
    enable: 'Etkinleştir', disable: 'Devre dışı bırak', rotateSecret: 'Anahtarı yenile', sendPing: 'test.ping gönder', history: 'Mesaj geçmişi',
    created: 'oluşturuldu', message: 'mesaj', type: 'tür', status: 'durum', attempts: 'deneme', code: 'kod', ms: 'ms', error: 'hata',
    started: 'başladı', response: 'yanıt', body: 'Gövde', replay: 'Yeniden işle', url: 'URL', scheme: 'şema',
    /** @param {string} until */
    rotated: (until) => `Yeni anahtar oluşturuldu; eskisi ${until} tarihine kadar imzalamaya devam eder.`,
    /** @param {string} id */
    pingSent: (id) => `test.ping gönderildi (${id}).`,
    /** @param {number} n */
    messageReplayed: (n) => `${n} hedefe yeniden gönderildi.`,
    /** @param {number} n */
    failedReplayed: (n) => `${n} başarısız gönderim yeniden gönderildi.`,
  },
};
