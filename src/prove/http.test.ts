import { describe, expect, it } from 'vitest';
import { parseEffects } from './http.js';

const URL_ = 'http://shop/_prove/effects';

describe('the effects contract', () => {
  it('takes {count, state} objects and bare counts; extra fields are ignored', () => {
    const effects = parseEffects('{"inv_a": {"count": 1, "state": "paid", "note": "x"}, "inv_b": 0, "inv_c": {"count": 2}}', URL_);
    expect([...effects]).toEqual([
      ['inv_a', { count: 1, state: 'paid' }],
      ['inv_b', { count: 0 }],
      ['inv_c', { count: 2 }],
    ]);
  });

  it('a null state is an unknown one, as SQL behind the route answers for an invoice with no state yet', () => {
    const effects = parseEffects('{"inv_a": {"count": 0, "state": null}, "inv_b": {"count": 1, "state": "paid"}}', URL_);
    expect([...effects]).toEqual([
      ['inv_a', { count: 0 }],
      ['inv_b', { count: 1, state: 'paid' }],
    ]);
  });

  it('anything else is PROVE_EFFECTS_INVALID, saying where', () => {
    expect(() => parseEffects('<html>', URL_)).toThrow(
      expect.objectContaining({ code: 'PROVE_EFFECTS_INVALID', message: `the effects at ${URL_} are not JSON` }),
    );
    expect(() => parseEffects('[1, 2]', URL_)).toThrow(expect.objectContaining({ code: 'PROVE_EFFECTS_INVALID' }));
    expect(() => parseEffects('{"inv_a": {"count": -1}}', URL_)).toThrow(/do not follow the contract \(at inv_a/);
    expect(() => parseEffects('{"inv_a": "1"}', URL_)).toThrow(/at inv_a/);
    expect(() => parseEffects('{"inv_a": 1.5}', URL_)).toThrow(/at inv_a/);
    expect(() => parseEffects('{"inv_a": {"count": 1, "state": 3}}', URL_)).toThrow(/at inv_a/);
    expect(() => parseEffects('{"inv_a": {"count": null, "state": "paid"}}', URL_)).toThrow(/at inv_a/);
  });
});
