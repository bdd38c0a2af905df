import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { ForwardSlots } from './forward-slots.js';

const SECRET = 'whsec_dGVzdA==';
const config = parseConfig({
  sources: {
    slow: { scheme: 'standard', secrets: [SECRET], forward: { url: 'http://127.0.0.1:9/a', secret: SECRET, max_in_flight: 4 } },
    local: { scheme: 'standard', secrets: [SECRET] },
  },
});

describe('ForwardSlots', () => {
  it('a claim reserves every free slot, keeps those it used, and a batch gives them back when it ends', () => {
    const slots = new ForwardSlots(config, 2);
    expect(slots.counts('slow')).toBe(true);
    expect(slots.counts('local')).toBe(false);
    const first = slots.reserve();
    expect(first).toEqual(new Map([['slow', 4]]));
    // A second loop claiming meanwhile finds none free: the cap holds across loops.
    expect(slots.reserve()).toEqual(new Map([['slow', 0]]));
    slots.settleReservation(new Map([['slow', 0]]), new Map());
    slots.settleReservation(first, new Map([['slow', 3]]));
    expect(slots.held('slow')).toBe(3);
    expect(slots.reserve()).toEqual(new Map([['slow', 1]]));
    slots.settleReservation(new Map([['slow', 1]]), new Map());
    slots.release('slow', 3);
    expect(slots.held('slow')).toBe(0);
  });

  it('with as many forward batches running as may, forwarding sources give nothing', () => {
    const slots = new ForwardSlots(config, 1);
    expect(slots.openGroup()).toBe(true);
    expect(slots.openGroup()).toBe(false);
    const reserved = slots.reserve();
    expect(reserved).toEqual(new Map([['slow', 0]]));
    slots.settleReservation(reserved, new Map());
    slots.closeGroup();
    expect(slots.reserve()).toEqual(new Map([['slow', 4]]));
  });
});
