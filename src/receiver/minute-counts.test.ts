import { describe, expect, it } from 'vitest';
import { MinuteCounts } from './minute-counts.js';

const at = (minute: number, second = 0) => Date.UTC(2026, 0, 1, 12, minute, second);

describe('MinuteCounts', () => {
  it('counts per minute, zeros included, and forgets a minute once its slot comes round again', () => {
    const counts = new MinuteCounts(3);
    counts.add('accepted', at(0, 5));
    counts.add('accepted', at(0, 59));
    counts.add('duplicate', at(1));
    counts.add('rejected', at(3)); // the slot of minute 0 again: minute 0 is gone
    expect(counts.read(at(0), at(3)).map((m) => [m.minute.slice(11, 16), m.accepted, m.duplicate, m.rejected])).toEqual([
      ['12:01', 0, 1, 0],
      ['12:02', 0, 0, 0],
      ['12:03', 0, 0, 1],
    ]);
    expect(counts.read(at(1), at(1))).toEqual([{ minute: new Date(at(1)).toISOString(), accepted: 0, duplicate: 1, rejected: 0 }]);
  });
});
