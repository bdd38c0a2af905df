import { describe, expect, it } from 'vitest';
import { allFaults, parseFaults } from './faults.js';

describe('parseFaults', () => {
  it('reads rates, rotate, all and none', () => {
    expect(parseFaults('drop=0.1, duplicate=0.2,rotate')).toEqual({ drop: 0.1, delay: 0, duplicate: 0.2, reorder: 0, replay: 0, rotate: true });
    expect(parseFaults('all')).toEqual(allFaults);
    expect(parseFaults('all,drop=0')).toEqual({ ...allFaults, drop: 0 });
    expect(parseFaults('none')).toEqual({ drop: 0, delay: 0, duplicate: 0, reorder: 0, replay: 0, rotate: false });
  });

  it('refuses unknown faults and rates outside 0..1, naming the part', () => {
    for (const bad of ['drop=2', 'drop', 'lose=0.1', 'drop=0.1=2', 'delay=-1']) {
      expect(() => parseFaults(bad)).toThrow(/--faults: cannot read/);
    }
  });
});
