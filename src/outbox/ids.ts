import { randomFillSync } from 'node:crypto';

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
