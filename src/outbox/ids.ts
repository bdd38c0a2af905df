import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

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
  const random = randomBytes(10);
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
