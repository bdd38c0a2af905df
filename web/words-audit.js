// @ts-check
// The Audit page's words.

export const auditWords = {
  en: {
    at: 'when',
    actor: 'who',
    role: 'role',
    address: 'address',
    method: 'method',
    route: 'route',
    target: 'what',
    outcome: 'status',
    errorCode: 'error',
    since: 'from',
    until: 'to',
    more: 'More',
    noEvents: 'No audit rows match.',
  },
  tr: {
    at: 'ne zaman',
    actor: 'kim',
    role: 'rol',
    address: 'adres',
    method: 'yöntem',
    route: 'rota',
    target: 'ne',
    outcome: 'durum',
    errorCode: 'hata',
    since: 'başlangıç',
    until: 'bitiş',
    more: 'Daha fazla',
    noEvents: 'Eşleşen denetim kaydı yok.',
  },
};
