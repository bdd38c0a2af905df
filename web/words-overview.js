// @ts-check
// The Overview page's words.

export const overviewWords = {
  en: {
    reviewQueue: 'review queue',
    ackP50: 'ack p50 ms',
    ackP99: 'ack p99 ms',
    failedOutbound: 'failed outbound',
    receivedPerMinute: "Answered per minute by this process's receiver: accepted, duplicate, rejected",
    settledPerMinute: 'Stored and settled per minute',
    outboundPerEndpoint: 'Outbound per endpoint (last hour): success rate, attempts, latency',
    processLocal:
      "Accepted, duplicate and rejected answers and acknowledgement latency are kept in this process's memory since it started (other processes' receivers are not counted); the rest is read from the store.",
    accepted: 'accepted',
    duplicate: 'duplicate',
    rejected: 'rejected',
    received: 'received',
    processed: 'processed',
    stale: 'stale',
    dead: 'dead',
    notReceiving: 'This process does not receive webhooks.',
    noAttempts: 'No outbound attempts in the last hour.',
    autovacuumOff:
      "The store's Postgres runs with autovacuum off: tekil's tables are never vacuumed nor analyzed. Turn autovacuum on, or run VACUUM ANALYZE on a schedule (docs/operations.md).",
  },
  tr: {
    reviewQueue: 'inceleme kuyruğu',
    ackP50: 'yanıt süresi p50 ms',
    ackP99: 'yanıt süresi p99 ms',
    failedOutbound: 'başarısız giden',
    receivedPerMinute: 'Bu sürecin alıcısının dakika başına yanıtları: kabul, tekrar, reddedilen',
    settledPerMinute: 'Dakika başına kaydedilen ve sonuçlanan teslimatlar',
    outboundPerEndpoint: 'Uç nokta başına giden (son bir saat): başarı oranı, deneme, gecikme',
    processLocal:
      'Kabul, tekrar ve reddedilen yanıtlar ile yanıt süresi bu sürecin belleğinde, süreç başladığından beri tutulur (diğer süreçlerin alıcıları sayılmaz); gerisi veritabanından okunur.',
    accepted: 'kabul',
    duplicate: 'tekrar',
    rejected: 'reddedilen',
    received: 'alındı',
    processed: 'işlendi',
    stale: 'eskimiş',
    dead: 'incelemede',
    notReceiving: 'Bu süreç webhook almıyor.',
    noAttempts: 'Son bir saatte giden deneme yok.',
    autovacuumOff:
      "Veritabanının Postgres'i autovacuum kapalı çalışıyor: tekil'in tablolarına hiç VACUUM ve ANALYZE yapılmıyor. autovacuum'u açın ya da VACUUM ANALYZE'ı düzenli aralıklarla çalıştırın (docs/operations.md).",
  },
};
