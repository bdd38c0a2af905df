import { createHash, randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

// Random bytes for ids, drawn a few kilobytes at a time: one randomBytes(10) per id was a system call
// per published message (3% of the API's CPU when publishing). The bytes only make ids unique; they are
// no secret, so a pool in memory is fine.
const POOL_IDS = 400;
const RANDOM_BYTES = 10;
const pool = Buffer.alloc(POOL_IDS * RANDOM_BYTES);
let poolOffset = pool.length;

function randomTail(): Buffer {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + RANDOM_BYTES);
  poolOffset += RANDOM_BYTES;
  return bytes;
}

/**
 * Time-ordered ids (48-bit milliseconds, then 80 random bits, in Crockford base32), so message ids
 * sort by creation and serve as pagination cursors.
 */
function sortableId(prefix: string): string {
  let time = Date.now();
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = CROCKFORD[time % 32]! + head;
    time = Math.floor(time / 32);
  }
  const random = randomTail();
  let tail = '';
  let bits = 0;
  let value = 0;
  for (const byte of random) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      tail += CROCKFORD[(value >>> (bits - 5)) & 31]!;
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return `${prefix}${head}${tail}`;
}

export function newEventId(): string {
  return sortableId('evt_');
}

export function newEndpointId(): string {
  return sortableId('ep_');
}

/** A tenant's id when the provider gives none of its own. */
export function newTenantId(): string {
  return sortableId('ten_');
}

/** Which event id an endpoint's receivers see: the message's (the default), or one per delivery. */
export const eventIdModes = ['message', 'delivery'] as const;
export type EventIdMode = (typeof eventIdModes)[number];

/**
 * A delivery's own event id (an endpoint with `event_id: delivery`): `evt_` and 26 base32 characters
 * (130 bits) of SHA-256 over the message id and the delivery id. Derived, not stored: the claim returns
 * both ids, so the id is the same in every retry and replay of the delivery, differs between two
 * endpoints of one message, and costs publishing nothing.
 */
export function deliveryEventId(messageId: string, deliveryId: number | string): string {
  const digest = createHash('sha256').update(`${messageId}/${deliveryId}`).digest();
  let id = 'evt_';
  let bits = 0;
  let value = 0;
  for (let i = 0; id.length < 30; ) {
    if (bits < 5) {
      value = ((value << 8) | digest[i++]!) & 0xffff;
      bits += 8;
    }
    id += CROCKFORD[(value >> (bits - 5)) & 31];
    bits -= 5;
  }
  return id;
}

/** The event id a delivery's receiver sees, by its endpoint's mode. */
export function eventIdFor(mode: string, messageId: string, deliveryId: number | string): string {
  return mode === 'delivery' ? deliveryEventId(messageId, deliveryId) : messageId;
}

/**
 * The message's bytes with every occurrence of its id replaced by `eventId`: the envelope's `event_id`
 * and wherever a caller's own body (publish's `body(eventId)`) put it. A message id is unique random
 * text, so it occurs nowhere else. A new buffer; the stored one is left alone.
 */
export function withEventId(body: Buffer, messageId: string, eventId: string): Buffer {
  const from = Buffer.from(messageId, 'utf8');
  const to = Buffer.from(eventId, 'utf8');
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = body.indexOf(from); at !== -1; at = body.indexOf(from, start)) {
    parts.push(body.subarray(start, at), to);
    start = at + from.length;
  }
  if (start === 0) return body;
  parts.push(body.subarray(start));
  return Buffer.concat(parts);
}
