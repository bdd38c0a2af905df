/** The NOTIFY channel a trigger signals on every insert into inbox_deliveries; replays signal it too. */
export const INBOX_CHANNEL = 'tekil_inbox';
