// @ts-check
// The Inbound page's words, and the delivery fields every inbound-side page labels the same way.

/** A delivery's fields and the list's filter and paging, shared by the pages that show deliveries. */
export const deliveryFieldWords = {
  en: {
    received: 'received',
    source: 'source',
    eventId: 'event id',
    type: 'type',
    status: 'status',
    attempts: 'attempts',
    resourceId: 'resource id',
    lastError: 'last error',
    since: 'from',
    until: 'to',
    minAttempts: 'attempts ≥',
    next: 'Next →',
    previous: '← Previous',
  },
  tr: {
    received: 'alındı',
    source: 'kaynak',
    eventId: 'olay kimliği',
    type: 'tür',
    status: 'durum',
    attempts: 'deneme',
    resourceId: 'nesne kimliği',
    lastError: 'son hata',
    since: 'başlangıç',
    until: 'bitiş',
    minAttempts: 'deneme ≥',
    next: 'Sonraki →',
    previous: '← Önceki',
  },
};

export const inboundWords = {
  en: {
    ...deliveryFieldWords.en,
    exportCsv: 'CSV',
    exportXlsx: 'Excel',
    exportPdf: 'PDF',
    export: 'Export:',
    noDeliveries: 'No deliveries match.',
    /** @param {number} n */
    pageN: (n) => `page ${n}`,
  },
  tr: {
    ...deliveryFieldWords.tr,
    exportCsv: 'CSV',
    exportXlsx: 'Excel',
    exportPdf: 'PDF',
    export: 'Dışa aktar:',
    noDeliveries: 'Eşleşen teslimat yok.',
    /** @param {number} n */
    pageN: (n) => `sayfa ${n}`,
  },
};
