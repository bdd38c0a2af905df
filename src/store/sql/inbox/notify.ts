import { defineStatement, type NoParams } from '../statement.js';

/** The NOTIFY channel a trigger signals when an insert into inbox_deliveries queues work; replays signal it too. */
export const INBOX_CHANNEL = 'tekil_inbox';

/** Wakes the workers after a replay queued deliveries (the insert trigger only covers new deliveries). */
export const notifyInbox = defineStatement<NoParams, never>('tekil_notify_inbox', `SELECT pg_notify('${INBOX_CHANNEL}', '')`);
