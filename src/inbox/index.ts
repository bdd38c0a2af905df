// What an operator does with received deliveries: list, show, replay, discard.
export { inboxStatuses, type InboxFilter, type InboxListStatus } from './filter.js';
export { listInbox, type InboxListItem, type InboxPage } from './list.js';
export { showDelivery, getInboxItem, type InboxAttempt, type InboxDetail } from './show.js';
export { replayDelivery, discardDelivery } from './replay.js';
export { replayMatching } from './bulk.js';
