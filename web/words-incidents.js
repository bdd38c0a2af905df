// @ts-check
// The Incidents page's words.

export const incidentsWords = {
  en: {
    state: 'state',
    all: 'all',
    open: 'open',
    closed: 'closed',
    show: 'Show',
    opened: 'opened',
    closedAt: 'closed',
    rule: 'rule',
    subject: 'subject',
    lastValue: 'last value',
    summary: 'what',
    noIncidents: 'No incidents.',
    more: 'More →',
    /** @param {number} n */
    openBanner: (n) => (n === 1 ? '1 incident is open.' : `${n} incidents are open.`),
  },
  tr: {
    state: 'durum',
    all: 'tümü',
    open: 'açık',
    closed: 'kapalı',
    show: 'Göster',
    opened: 'açıldı',
    closedAt: 'kapandı',
    rule: 'kural',
    subject: 'etkilenen',
    lastValue: 'son değer',
    summary: 'ne oldu',
    noIncidents: 'Arıza yok.',
    more: 'Devamı →',
    /** @param {number} n */
    openBanner: (n) => `${n} açık arıza var.`,
  },
};
