/** The NOTIFY channel a trigger signals when an insert into inbox_deliveries queues work; replays signal it too. */
export const INBOX_CHANNEL = 'tekil_inbox';
